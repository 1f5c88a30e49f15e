// The browser test: headless Chromium, driven by playwright-core, (1) opens the browsable reference that
// hubd serves and checks that it renders the document without loading anything from another origin, and
// (2) calls the API from a page of another origin, through CORS: allowed for the configured origin, refused
// for any other. Run by internal/clienttest/browser_test.go, which passes the addresses in the environment.
import { chromium, type Page } from "playwright-core";

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new Error(`${name} is not set`);
  }
  return value;
}

const hubd = env("HUBD_URL"); // hubd, through the proxy that checks every answer against the document
const token = env("HUBD_TOKEN");
const allowedApp = env("APP_URL"); // a page of an origin hubd's --cors-origins names
const otherApp = env("OTHER_APP_URL"); // a page of an origin it does not name
const title = env("DOC_TITLE"); // the document's info.title, which the rendered page shows

const failures: string[] = [];
function check(ok: boolean, what: string): void {
  if (!ok) {
    failures.push(what);
  }
}

// watch records what a page loads from outside its own origin and every error it reports (a CSP violation
// is reported on the console).
function watch(page: Page, label: string): void {
  const own = new URL(hubd).origin;
  page.on("request", (req) => {
    const url = new URL(req.url());
    if ((url.protocol === "http:" || url.protocol === "https:") && url.origin !== own) {
      failures.push(`${label}: loaded ${req.url()} from another origin`);
    }
  });
  page.on("console", (msg) => {
    if (msg.type() === "error") {
      failures.push(`${label}: console error: ${msg.text()}`);
    }
  });
  page.on("pageerror", (err) => failures.push(`${label}: page error: ${err.message}`));
}

// readReference opens the reference at path and checks that the document is rendered: its title, the
// operation groups, an operation of them.
async function readReference(page: Page, path: string): Promise<void> {
  const resp = await page.goto(hubd + path);
  check(resp !== null && resp.status() === 200, `${path}: status ${resp?.status()}`);
  await page.getByRole("heading", { name: title, level: 1 }).waitFor({ timeout: 60_000 });
  // Each operation is a section headed by its summary (rendered once the document is read).
  await page.locator("h2", { hasText: "Create a Space." }).waitFor({ state: "attached", timeout: 30_000 });
  const menu = await page.locator("[role=menuitem], .menu-content label").allInnerTexts();
  check(menu.some((t) => t.includes("Unit")), `${path}: the menu lists no Unit group (${menu.length} items)`);
}

interface CrossOriginResult {
  listed?: number;
  requestID?: string | null;
  created?: number;
  uploaded?: number;
  etag?: string | null;
  data?: string;
  error?: string;
}

// callAPI works as a browser app would, with fetch from the page (so from its origin): it lists Spaces,
// creates one and a Unit in it, uploads YAML (a request that needs a preflight) and downloads it, reading
// the headers CORS exposes.
async function callAPI(page: Page, slug: string): Promise<CrossOriginResult> {
  return page.evaluate(
    async ({ base, bearer, slug, manifest }) => {
      const auth = { Authorization: `Bearer ${bearer}` };
      const json = { ...auth, "Content-Type": "application/json" };
      try {
        const list = await fetch(`${base}/api/space`, { headers: auth });
        const listed: unknown = await list.json();
        const created = await fetch(`${base}/api/space`, {
          method: "POST", headers: json, body: JSON.stringify({ Slug: slug, DisplayName: "Made by a browser app" }),
        });
        const space: unknown = await created.json();
        const spaceID = typeof space === "object" && space !== null && "SpaceID" in space ? String(space.SpaceID) : "";
        const unitResp = await fetch(`${base}/api/space/${spaceID}/unit`, {
          method: "POST", headers: json, body: JSON.stringify({ Slug: "web", ToolchainType: "Kubernetes/YAML" }),
        });
        const unit: unknown = await unitResp.json();
        const unitID = typeof unit === "object" && unit !== null && "Unit" in unit && typeof unit.Unit === "object" &&
          unit.Unit !== null && "UnitID" in unit.Unit ? String(unit.Unit.UnitID) : "";
        const dataURL = `${base}/api/space/${spaceID}/unit/${unitID}/data`;
        const uploaded = await fetch(dataURL, { method: "PUT", headers: { ...auth, "Content-Type": "application/yaml" }, body: manifest });
        const downloaded = await fetch(dataURL, { headers: { ...auth, Accept: "application/yaml" } });
        return {
          listed: Array.isArray(listed) ? listed.length : -1,
          requestID: list.headers.get("X-Request-Id"),
          created: created.status,
          uploaded: uploaded.status,
          etag: downloaded.headers.get("ETag"),
          data: await downloaded.text(),
        };
      } catch (e) {
        return { error: String(e) };
      }
    },
    { base: hubd, bearer: token, slug, manifest: yamlManifest },
  );
}

const yamlManifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n";

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  // No sandbox (the tests may run as root); no background traffic to Google's hosts, which a closed
  // network refuses.
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const context = await browser.newContext();
  for (const path of ["/docs", "/api/docs"]) {
    const page = await context.newPage();
    watch(page, path);
    await readReference(page, path);
    await page.close();
  }

  const app = await context.newPage();
  await app.goto(allowedApp);
  const allowed = await callAPI(app, "from-a-browser");
  check(allowed.error === undefined, `allowed origin: the calls failed: ${allowed.error}`);
  check(allowed.listed !== undefined && allowed.listed >= 0, `allowed origin: listing answered ${allowed.listed}`);
  check(typeof allowed.requestID === "string" && allowed.requestID.length > 0, "allowed origin: X-Request-Id is not exposed");
  check(allowed.created === 200, `allowed origin: creating a Space answered ${allowed.created}`);
  check(allowed.uploaded === 200, `allowed origin: uploading YAML answered ${allowed.uploaded}`);
  check(allowed.data === yamlManifest, `allowed origin: the data came back as ${JSON.stringify(allowed.data)}`);
  check(typeof allowed.etag === "string" && allowed.etag.length > 0, "allowed origin: ETag is not exposed");

  const other = await context.newPage();
  await other.goto(otherApp);
  const refused = await callAPI(other, "from-elsewhere");
  check(refused.error !== undefined && refused.error.includes("TypeError"),
    `other origin: the browser let it read the API: ${JSON.stringify(refused)}`);
} finally {
  await browser.close();
}

if (failures.length > 0) {
  console.error(failures.join("\n"));
  process.exit(1);
}
console.log("browser test passed");
