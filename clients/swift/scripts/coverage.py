"""Fails when an operation of the served OpenAPI document has no method in
the Swift package: each operationId must be listed in `operations`
(Operations.swift) and its method declared as `public func <name>(`."""

import json
import os
import re
import sys
import urllib.request

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
base = os.environ["MATCHPOINT_BASE_URL"].rstrip("/")
with urllib.request.urlopen(base + "/openapi.json") as res:
    doc = json.load(res)
ids = sorted(op["operationId"] for item in doc["paths"].values() for op in item.values()
             if isinstance(op, dict) and "operationId" in op)
source = ""
for dirpath, _, files in os.walk(os.path.join(here, "Sources")):
    for f in files:
        if f.endswith(".swift"):
            with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                source += fh.read()
listed = dict(re.findall(r'^    "([^"]+)": "([^"]+)",$', source, re.M))
declared = set(re.findall(r"public func (\w+)\(", source))
missing = [i for i in ids if listed.get(i) not in declared]
for i in missing:
    print(f"coverage: operation {i} has no method in the Swift package (regenerate with go run ./clients/gen)")
print(f"coverage: {len(ids) - len(missing)} passed, {len(missing)} failed")
sys.exit(1 if missing or not ids else 0)
