// Every operation of the served OpenAPI document has a method, every list
// that follows next_cursor has an auto-paging method, and every webhook
// kind has a type. Fails when the service grew and the client was not
// regenerated (npm run generate -- $MATCHPOINT_BASE_URL/openapi.json).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Matchpoint, OPERATION_IDS, WEBHOOK_EVENT_TYPES } from "../dist/esm/index.js";

const base = process.env.MATCHPOINT_BASE_URL?.replace(/\/+$/, "");
const camel = (id) => id.replace(/[-_.]([a-z0-9])/g, (_, c) => c.toUpperCase());

test("every operation of the served document has a method", { skip: !base && "needs MATCHPOINT_BASE_URL (test.sh sets it)" }, async () => {
  const res = await fetch(base + "/openapi.json");
  assert.equal(res.status, 200);
  const doc = await res.json();
  const missing = [];
  const served = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of ["get", "post", "put", "patch", "delete"]) {
      const op = item[m];
      if (!op) continue;
      served.push(op.operationId);
      if (typeof Matchpoint.prototype[camel(op.operationId)] !== "function") missing.push(`${op.operationId} (${m.toUpperCase()} ${p})`);
      const params = op.parameters ?? [];
      const okRef = op.responses?.["200"]?.content?.["application/json"]?.schema?.$ref;
      const ok = okRef ? doc.components.schemas[okRef.split("/").pop()] : undefined;
      const bodyRef = op.requestBody?.content?.["application/json"]?.schema?.$ref;
      const body = bodyRef ? doc.components.schemas[bodyRef.split("/").pop()] : undefined;
      const paged = ok?.properties?.next_cursor && (params.some((x) => x.name === "cursor") || body?.properties?.cursor);
      if (paged && typeof Matchpoint.prototype[camel(op.operationId) + "AutoPaging"] !== "function") missing.push(`${op.operationId} auto-paging`);
    }
  }
  assert.deepEqual(missing, [], "operations without a method");
  assert.ok(served.length > 50, `${served.length} operations served`);
  const stale = OPERATION_IDS.filter((id) => !served.includes(id));
  assert.deepEqual(stale, [], "methods of operations the service no longer has");
  const kinds = Object.keys(doc.webhooks ?? {});
  assert.deepEqual(kinds.filter((k) => !WEBHOOK_EVENT_TYPES.includes(k)), [], "webhook kinds without a type");
});
