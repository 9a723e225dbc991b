"""The person's side of the OAuth flow: a cookie-keeping browser that fills
in the service's login and consent forms and stops at the redirect to the
client (standard library only)."""

import http.cookiejar
from html.parser import HTMLParser
from typing import Dict, Optional, Tuple
from urllib import error as urlerror
from urllib import request as urlrequest
from urllib.parse import urlencode, urljoin, urlparse


class _Forms(HTMLParser):
    def __init__(self):
        super().__init__()
        self.forms: Dict[str, Dict[str, str]] = {}
        self._current: Optional[Dict[str, str]] = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._current = self.forms.setdefault(a.get("action", ""), {})
        elif tag == "input" and self._current is not None and a.get("name"):
            self._current[a["name"]] = a.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self._current = None


class _Stop(urlrequest.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _browse(opener, origin: str, method: str, url: str, form: Optional[Dict[str, str]]) -> Tuple[str, Optional[str]]:
    for _ in range(10):
        data = urlencode(form).encode() if form is not None else None
        req = urlrequest.Request(url, data=data, method=method)
        if form is not None:
            req.add_header("Content-Type", "application/x-www-form-urlencoded")
            req.add_header("Origin", origin)
        try:
            with opener.open(req) as res:
                return res.read().decode(), None
        except urlerror.HTTPError as e:
            if e.code not in (301, 302, 303, 307, 308):
                raise RuntimeError(f"{method} {url}: {e.code} {e.read()[:500]!r}") from None
            loc = urljoin(url, e.headers["Location"])
        if urlparse(loc).netloc != urlparse(origin).netloc:
            return "", loc
        method, url, form = "GET", loc, None
    raise RuntimeError("too many redirects")


def sign_in(base_url: str, authorize_url: str, login: str, password: str) -> str:
    """Signs in and allows; returns the redirect URI the service sent the browser to."""
    jar = http.cookiejar.CookieJar()
    opener = urlrequest.build_opener(urlrequest.HTTPCookieProcessor(jar), _Stop())
    origin = "{0.scheme}://{0.netloc}".format(urlparse(base_url))
    page, loc = _browse(opener, origin, "GET", authorize_url, None)
    for _ in range(4):
        if loc:
            return loc
        p = _Forms()
        p.feed(page)
        if "/login" in p.forms:
            form = dict(p.forms["/login"], login=login, password=password)
            page, loc = _browse(opener, origin, "POST", base_url + "/login", form)
        elif "/oauth/authorize" in p.forms:
            form = dict(p.forms["/oauth/authorize"], decision="allow")
            page, loc = _browse(opener, origin, "POST", base_url + "/oauth/authorize", form)
        else:
            raise RuntimeError("no login or consent form on the page:\n" + page[:2000])
    if loc:
        return loc
    raise RuntimeError("the flow did not end at the redirect URI")
