// The browser sign-in test: headless Chromium, driven by playwright-core, opens the reference app (web/app,
// served from its own origin), clicks Sign in, fills the identity provider's own login page, and checks that
// the app comes back signed in and shows the user and the organization, that the code left the address bar,
// that nothing was left in localStorage, sessionStorage or cookies the app could read, and that a reload
// forgets the token. Run by internal/clienttest/signin_test.go, which passes the addresses and the user in
// the environment.
import { chromium, type BrowserContext, type Page, type Response } from "playwright-core";

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new Error(`${name} is not set`);
  }
  return value;
}

const appURL = env("APP_URL"); // the reference app's page (its origin + pathname is the redirect URI)
// EXPECT_UNSUPPORTED=1: hubd has browser sign-in off, and the app must say so instead of offering it.
const expectUnsupported = process.env.EXPECT_UNSUPPORTED === "1";

const failures: string[] = [];
function check(ok: boolean, what: string): void {
  if (!ok) {
    failures.push(what);
  }
}

// Every access_token the page was handed (the provider's and hubd's), to look for in storage afterwards.
const tokens: string[] = [];
async function collectTokens(resp: Response): Promise<void> {
  if (resp.request().method() !== "POST" || !resp.ok()) {
    return;
  }
  try {
    const body: unknown = await resp.json();
    if (typeof body === "object" && body !== null && "access_token" in body && typeof body.access_token === "string") {
      tokens.push(body.access_token);
    }
  } catch {
    // Not a token answer.
  }
}

async function appText(page: Page, id: string): Promise<string> {
  return (await page.locator(`#${id}`).textContent()) ?? "";
}

const appOrigin = new URL(appURL).origin;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  // No sandbox (the tests may run as root); no background traffic to Google's hosts, which a closed
  // network refuses.
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("pageerror", (err) => failures.push(`page error: ${err.message}`));
  page.on("response", (resp) => void collectTokens(resp));
  if (expectUnsupported) {
    await unsupported(page);
  } else {
    await signIn(page, context);
  }
} finally {
  await browser.close();
}

if (failures.length > 0) {
  console.error(failures.join("\n"));
  process.exit(1);
}
console.log("sign-in test passed");

// unsupported checks that the app, against a hubd whose /api/info names no AuthIssuer, says so and offers
// no sign-in.
async function unsupported(page: Page): Promise<void> {
  await page.goto(appURL);
  await page.getByText("does not support browser sign-in").waitFor({ timeout: 30_000 });
  check(!(await page.locator("#signin").isVisible()), "the app offers sign-in although hubd does not support it");
  check(!(await page.locator("#error").isVisible()), `the app shows an error: ${await appText(page, "error")}`);
}

// signIn signs in through the app and the provider's login page and checks what the app shows and keeps.
async function signIn(page: Page, context: BrowserContext): Promise<void> {
  const username = env("SIGNIN_USERNAME");
  const password = env("SIGNIN_PASSWORD");
  // WANT_ERROR: hubd refuses the sign-in, and the app must show this text of its answer; otherwise it must
  // show WANT_USER as the user and WANT_ORGANIZATION as the organization.
  const wantError = process.env.WANT_ERROR ?? "";

  await page.goto(appURL);
  const signin = page.locator("#signin");
  await page.locator("#signin:visible, #error:visible").first().waitFor({ timeout: 30_000 });
  if (!(await signin.isVisible())) {
    throw new Error(`the app offers no sign-in: ${await appText(page, "status")} ${await appText(page, "error")}`);
  }
  await signin.click();

  // The identity provider's login page, on its own origin.
  await page.waitForURL((u) => u.origin !== appOrigin, { timeout: 30_000 });
  const form = page.locator("form").filter({ has: page.locator("input[type=password]") });
  await form.waitFor({ timeout: 30_000 });
  await form.locator("input[name=username]").fill(username);
  await form.locator("input[type=password]").fill(password);
  await form.locator("button[type=submit], input[type=submit]").first().click();

  // Back on the app, which finishes the sign-in.
  await page.waitForURL((u) => u.origin === appOrigin, { timeout: 30_000 });
  await page.locator("#signed-in:visible, #error:visible").first().waitFor({ timeout: 30_000 });
  const url = new URL(page.url());
  check(!url.searchParams.has("code") && !url.searchParams.has("state"), `the code is still in the address bar: ${page.url()}`);
  if (wantError !== "") {
    const shown = await appText(page, "error");
    check(shown.includes(wantError), `the app shows the error ${JSON.stringify(shown)}, want ${JSON.stringify(wantError)}`);
    check(!(await page.locator("#signed-in").isVisible()), "the app shows a signed-in user although hubd refused");
    check(await page.evaluate(() => sessionStorage.length === 0 && localStorage.length === 0), "the app left storage behind");
    return;
  }
  if (await page.locator("#error").isVisible()) {
    throw new Error(`the app did not sign in: ${await appText(page, "error")}`);
  }
  const wantUser = env("WANT_USER"); // text the app must show as the user
  const wantOrg = env("WANT_ORGANIZATION"); // text the app must show as the organization
  const user = await appText(page, "user");
  const org = await appText(page, "organization");
  check(user.includes(wantUser), `the app shows the user as ${JSON.stringify(user)}, want ${JSON.stringify(wantUser)}`);
  check(org.includes(wantOrg), `the app shows the organization as ${JSON.stringify(org)}, want ${JSON.stringify(wantOrg)}`);

  // The tokens live in memory only; the PKCE round trip's sessionStorage entry is gone.
  check(tokens.length >= 2, `the page received ${tokens.length} access tokens, want the provider's and hubd's`);
  const stored = await page.evaluate(() => ({
    local: localStorage.length,
    session: sessionStorage.length,
    all: JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie,
  }));
  check(stored.local === 0, `localStorage holds ${stored.local} entries`);
  check(stored.session === 0, `sessionStorage holds ${stored.session} entries after the sign-in`);
  const cookies = JSON.stringify(await context.cookies());
  for (const t of tokens) {
    check(!stored.all.includes(t), "a token is in the page's storage or cookies");
    check(!cookies.includes(t), "a token is in a cookie");
  }

  // A reload forgets the token: the app is signed out.
  await page.reload();
  await page.locator("#signin:visible, #error:visible").first().waitFor({ timeout: 30_000 });
  check(await page.locator("#signin").isVisible(), "after a reload the app does not offer sign-in");
  check(!(await page.locator("#signed-in").isVisible()), "after a reload the app still shows a signed-in user");
}
