"""Verification of the webhooks Matchpoint sends (Standard Webhooks).

Headers webhook-id, webhook-timestamp (Unix seconds) and webhook-signature,
which holds one or more space-separated "v1,<base64 HMAC-SHA256>" signatures
of "<id>.<timestamp>.<body>" made with the subscription's secret ("whsec_" +
base64 of the key). Two signatures appear in the day after a rotation; one
match is enough.
"""

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Union

from ._errors import WebhookVerificationError
from ._types import EVENT_DATA, decode

TOLERANCE = 300  # seconds a timestamp may be from now, either way


@dataclass
class WebhookEvent:
    """A verified delivery: data is the kind's typed object (MatchAcceptedEventData
    for match.accepted ...) when the kind is known, else the JSON object."""

    id: str
    type: str
    created: str
    data: Any
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def verify(payload: Union[bytes, str], headers: Mapping[str, str], secret: str, *,
           tolerance: int = TOLERANCE, now: Optional[float] = None) -> WebhookEvent:
    """Checks a delivery's signature and timestamp and returns the event;
    raises WebhookVerificationError otherwise. payload is the raw body."""
    if isinstance(payload, str):
        payload = payload.encode()
    try:
        key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret, validate=True)
    except ValueError:
        raise WebhookVerificationError("invalid secret") from None
    if not key:
        raise WebhookVerificationError("invalid secret")
    msg_id, ts, sigs = (_header(headers, h) for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not msg_id or not ts or not sigs:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header")
    try:
        at = int(ts)
    except ValueError:
        raise WebhookVerificationError("invalid webhook-timestamp") from None
    current = time.time() if now is None else now
    if current - at > tolerance:
        raise WebhookVerificationError("timestamp too old")
    if at - current > tolerance:
        raise WebhookVerificationError("timestamp too far in the future")
    want = hmac.new(key, msg_id.encode() + b"." + ts.encode() + b"." + payload, hashlib.sha256).digest()
    for sig in sigs.split():
        version, _, value = sig.partition(",")
        if version != "v1":
            continue
        try:
            got = base64.b64decode(value, validate=True)
        except ValueError:
            continue
        if hmac.compare_digest(got, want):
            break
    else:
        raise WebhookVerificationError("no matching signature")
    try:
        body = json.loads(payload)
    except ValueError as e:
        raise WebhookVerificationError(f"body is not JSON: {e}") from None
    kind = body.get("type", "")
    data = body.get("data")
    if kind in EVENT_DATA:
        data = decode(EVENT_DATA[kind], data)
    return WebhookEvent(id=body.get("id", ""), type=kind, created=body.get("created", ""), data=data, raw=body)
