// The TypeScript client scenario: what a browser app or a Node bot does with hubd, through openapi-fetch
// and the types openapi-typescript generates from the served document (gen/api.d.ts). No casts, no
// non-null assertions, no hand-written serializers: if the document is wrong, this does not compile or
// fails. HUBD_URL and HUBD_TOKEN come from the Go test that runs it (clienttest).
import createClient from "openapi-fetch";
import type { components, paths } from "./gen/api.js";

type Schemas = components["schemas"];

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set`);
  return value;
}

// ok returns a call's data, or throws with its error body.
function ok<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) {
    throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  }
  return result.data;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`check failed: ${what}`);
}

const base = env("HUBD_URL");
const api = createClient<paths>({ baseUrl: `${base}/api`, headers: { Authorization: `Bearer ${env("HUBD_TOKEN")}` } });

// A Space and Units with only what a person sets.
const space: Schemas["Space"] = ok(await api.POST("/space", { body: { Slug: "dev", DisplayName: "Development" } }), "create Space");
const spaceID: string = space.SpaceID;
check(Object.keys(space.Labels).length === 0, "maps are present and empty");
const created = ok(
  await api.POST("/space/{space_id}/unit", { params: { path: { space_id: spaceID } }, body: { Slug: "web", ToolchainType: "Kubernetes/YAML" } }),
  "create Unit",
);
const web: Schemas["Unit"] = created.Unit;
check(web.HeadRevisionNum === 0, "a new Unit has no Revision");
const dataPath = { params: { path: { space_id: spaceID, unit_id: web.UnitID } } };

// YAML up (JSON clients send text as one JSON string) and down (as text).
const manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  LOG_LEVEL: info\n";
const uploaded = ok(await api.PUT("/space/{space_id}/unit/{unit_id}/data", { ...dataPath, body: manifest }), "upload YAML");
check(uploaded.Unit.HeadRevisionNum === 1, "the upload made Revision 1");
const yaml = ok(await api.GET("/space/{space_id}/unit/{unit_id}/data", { ...dataPath, parseAs: "text" }), "download YAML");
check(yaml === manifest, "YAML comes back as written");
ok(await api.PUT("/space/{space_id}/unit/{unit_id}/data", { ...dataPath, body: manifest + '  PORT: "8080"\n' }), "upload YAML again");

// JSON up and down.
const settings = ok(
  await api.POST("/space/{space_id}/unit", { params: { path: { space_id: spaceID } }, body: { Slug: "settings", ToolchainType: "AppConfig/JSON" } }),
  "create JSON Unit",
).Unit;
const settingsPath = { params: { path: { space_id: spaceID, unit_id: settings.UnitID } } };
ok(await api.PUT("/space/{space_id}/unit/{unit_id}/data", { ...settingsPath, body: { port: 8080, debug: false } }), "upload JSON");
const json = ok(await api.GET("/space/{space_id}/unit/{unit_id}/data", settingsPath), "download JSON");
check(JSON.stringify(json) === JSON.stringify({ port: 8080, debug: false }), "JSON comes back as data");

// A list with where, and diffs.
const units = ok(
  await api.GET("/space/{space_id}/unit", { params: { path: { space_id: spaceID }, query: { where: "ToolchainType = 'Kubernetes/YAML'" } } }),
  "list Units",
);
check(units.length === 1 && units[0]?.Unit.Slug === "web", "where selects the YAML Unit");
const diff = ok(
  await api.GET("/space/{space_id}/unit/{unit_id}/diff", { params: { path: { space_id: spaceID, unit_id: web.UnitID }, query: { from: 1, to: 2 } } }),
  "diff Revisions",
);
check(diff.Changes.length > 0, "the Revisions differ");
const texts = ok(await api.POST("/diff", { body: { ToolchainType: "AppConfig/Env", From: "A=1\n", To: "A=2\n" } }), "diff texts");
check(texts.Changes[0]?.Path === "A", "the diff names the path");

// A ServiceAccount signs in with a registered key (RFC 7523) and acts with its own role.
const sa = ok(await api.POST("/service_account", { body: { Slug: "ci", OrgRole: "member" } }), "create ServiceAccount");
const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
const exported = await crypto.subtle.exportKey("jwk", pair.publicKey);
const publicJWK: Schemas["PublicJWK"] = { kty: "EC", crv: exported.crv, x: exported.x, y: exported.y };
const key = ok(await api.POST("/user/{user_id}/key", { params: { path: { user_id: sa.UserID } }, body: { PublicJWK: publicJWK } }), "register key");
const info = ok(await api.GET("/info"), "info");
const assertion = await signAssertion(pair.privateKey, key.Kid, sa.UserID, info.TokenExchangeAudience);
const anonymous = createClient<paths>({ baseUrl: `${base}/api` });
const token = ok(
  await anonymous.POST("/auth/token", {
    body: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion },
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
  }),
  "sign in",
);
const asBot = createClient<paths>({ baseUrl: `${base}/api`, headers: { Authorization: `Bearer ${token.access_token}` } });
const me = ok(await asBot.GET("/me"), "me");
check(me.UserID === sa.UserID && me.OrgRole === "member", "the token acts as the ServiceAccount");

// A Channel: lease it, run a command, poll, narrow the message to its CommandRun, answer it.
const channel = ok(
  await api.POST("/space/{space_id}/channel", {
    params: { path: { space_id: spaceID } },
    body: {
      Slug: "ops",
      Commands: { restart: { Description: "Restart a Unit", Options: [{ Name: "unit", DataType: "Unit", Required: true }] } },
      Subscriptions: [{ EventTypes: ["unit.created"] }],
    },
  }),
  "create Channel",
);
const channelPath = { params: { path: { space_id: spaceID, channel_id: channel.ChannelID } } };
const lease = ok(await api.POST("/space/{space_id}/channel/{channel_id}/lease", { ...channelPath, body: {} }), "lease");
const run = ok(await api.POST("/command_run", { body: { Command: "restart", SpaceID: spaceID, Options: { unit: "web" } } }), "run a command");
const messages = ok(
  await api.POST("/space/{space_id}/channel/{channel_id}/poll", { ...channelPath, body: { ClaimToken: lease.ClaimToken, TimeoutSeconds: 5 } }),
  "poll",
);
const first = messages[0];
if (first === undefined || first.Type !== "CommandRun") throw new Error(`expected a CommandRun, got ${JSON.stringify(messages)}`);
const delivered: Schemas["CommandRun"] = first.CommandRun;
check(delivered.CommandRunID === run.CommandRunID, "the run is delivered");
check(delivered.Parameters["unit"] === web.UnitID, "an entity option arrives as the entity's ID");
const answered = ok(
  await api.POST("/space/{space_id}/channel/{channel_id}/command_run/{command_run_id}/result", {
    params: { path: { space_id: spaceID, channel_id: channel.ChannelID, command_run_id: delivered.CommandRunID } },
    body: { Status: "Completed", Result: { restarted: true } },
  }),
  "answer",
);
check(answered.Status === "Completed", "the run completed");

// An event the Channel subscribes to arrives with a typed payload.
const worker = ok(
  await api.POST("/space/{space_id}/unit", { params: { path: { space_id: spaceID } }, body: { Slug: "worker", ToolchainType: "AppConfig/Env" } }),
  "create another Unit",
).Unit;
const events = ok(
  await api.POST("/space/{space_id}/channel/{channel_id}/poll", { ...channelPath, body: { ClaimToken: lease.ClaimToken, TimeoutSeconds: 5, MaxRuns: 0 } }),
  "poll events",
);
const last = events[events.length - 1];
if (last === undefined || last.Type !== "Event") throw new Error(`expected an event, got ${JSON.stringify(events)}`);
const payload: Schemas["EventPayload"] = last.Event.Payload;
check(last.Event.EventType === "unit.created", "the subscribed event arrives");
check(payload.EntityType === "Unit" && payload.EntityID === worker.UnitID && payload.Slug === "worker", "its payload names the Unit");
console.log("scenario passed");

// signAssertion is a compact JWS (ES256) of the RFC 7523 claims, signed with WebCrypto.
async function signAssertion(privateKey: CryptoKey, kid: string, subject: string, audience: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const encode = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url");
  const part = (value: object): string => encode(new TextEncoder().encode(JSON.stringify(value)));
  const input = `${part({ alg: "ES256", typ: "JWT", kid })}.${part({ iss: subject, sub: subject, aud: audience, iat: now, exp: now + 60, jti: crypto.randomUUID() })}`;
  const signature = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, privateKey, new TextEncoder().encode(input));
  return `${input}.${encode(new Uint8Array(signature))}`;
}
