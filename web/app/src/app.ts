// The reference browser app: it signs a person in to hubd and shows who they are.
//
// It is configured by two values only, read from config.json beside index.html: base (the hubd address)
// and clientID (the OAuth client registered for this page's address). Everything else is discovered:
//
//  1. GET {base}/api/info gives AuthIssuer (empty: this hubd does not support browser sign-in) and
//     TokenExchangeEndpoint.
//  2. OIDC discovery at {AuthIssuer}/.well-known/openid-configuration gives the authorization and token
//     endpoints.
//  3. Authorization code with PKCE (S256) as a public client: redirect to the identity provider, which
//     redirects back to this page (origin + pathname) with a code; redeem it with the code_verifier.
//  4. RFC 8693 token exchange at TokenExchangeEndpoint: the provider's access token for a hubd token.
//  5. GET {base}/api/me and GET {base}/api/organization/{id} with that token.
//
// The hubd token lives in this module's memory only: never in localStorage, sessionStorage or a cookie.
// A reload signs the person out; the app never refreshes or stores tokens.

interface Config {
  base: string;
  clientID: string;
}

interface ApiInfo {
  AuthIssuer: string;
  TokenExchangeEndpoint: string;
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
}

interface OrganizationMember {
  OrganizationID?: string;
  UserID?: string;
  Username?: string;
  DisplayName?: string;
  OrgRole?: string;
}

interface Organization {
  OrganizationID?: string;
  Slug?: string;
  DisplayName?: string;
}

// What must survive the full-page redirect to the identity provider and back (see savePending).
interface Pending {
  state: string;
  verifier: string;
}

const pendingKey = "hubd-app-pkce";
const scope = "openid email profile organization";

// The hubd token, in memory only.
let token = "";

// A failure to show as it is: the server's or the provider's own explanation.
class AppError extends Error {}

function element(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (el === null) {
    throw new AppError(`the page has no #${id}`);
  }
  return el;
}

function showStatus(text: string): void {
  element("status").textContent = text;
}

function showError(err: unknown): void {
  const box = element("error");
  box.textContent = err instanceof Error ? err.message : String(err);
  box.hidden = false;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

async function loadConfig(): Promise<Config> {
  const resp = await fetch(new URL("config.json", document.baseURI), { cache: "no-store" });
  if (!resp.ok) {
    throw new AppError(`config.json could not be read (${resp.status}): it names base and clientID`);
  }
  const raw: unknown = await resp.json();
  const base = field(raw, "base");
  const clientID = field(raw, "clientID");
  if (base === "" || clientID === "") {
    throw new AppError("config.json must name base (the hubd address) and clientID (the registered OAuth client)");
  }
  return { base: trimSlash(base), clientID };
}

// field reads a string property of a JSON value ("" when absent or not a string).
function field(value: unknown, name: string): string {
  if (typeof value === "object" && value !== null && name in value) {
    const v: unknown = (value as Record<string, unknown>)[name];
    return typeof v === "string" ? v : "";
  }
  return "";
}

// explain turns an error answer into a sentence: an RFC 6749 body ({error, error_description}) from a token
// endpoint, hubd's error body ({Error: {Message, Type}}) from the API, or the status and text otherwise.
async function explain(what: string, resp: Response): Promise<AppError> {
  const text = await resp.text();
  let detail = text.trim().slice(0, 500);
  try {
    const body: unknown = JSON.parse(text);
    const oauthError = field(body, "error");
    if (oauthError !== "") {
      const description = field(body, "error_description");
      detail = description === "" ? oauthError : `${oauthError}: ${description}`;
    } else if (typeof body === "object" && body !== null && "Error" in body) {
      const e: unknown = body.Error;
      const type = field(e, "Type");
      detail = `${type === "" ? "" : type + ": "}${field(e, "Message")}`;
    }
  } catch {
    // Not JSON: the text as it is.
  }
  return new AppError(`${what} failed (HTTP ${resp.status})${detail === "" ? "" : ": " + detail}`);
}

async function getJSON(what: string, url: string, bearer?: string): Promise<unknown> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (bearer !== undefined) {
    headers["Authorization"] = `Bearer ${bearer}`;
  }
  let resp: Response;
  try {
    resp = await fetch(url, { headers });
  } catch (e) {
    // A network failure, or an answer the browser withheld because CORS does not allow this origin.
    throw new AppError(`${what}: ${url} could not be reached (${String(e)}); is this page's origin allowed by CORS?`);
  }
  if (!resp.ok) {
    throw await explain(what, resp);
  }
  return resp.json();
}

// postForm sends an application/x-www-form-urlencoded request to a token endpoint.
async function postForm(what: string, url: string, form: Record<string, string>): Promise<unknown> {
  let resp: Response;
  try {
    resp = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams(form),
    });
  } catch (e) {
    throw new AppError(`${what}: ${url} could not be reached (${String(e)}); is this page's origin allowed by CORS?`);
  }
  if (!resp.ok) {
    throw await explain(what, resp);
  }
  return resp.json();
}

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) {
    s += String.fromCharCode(b);
  }
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomString(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return base64url(bytes); // 43 characters, within RFC 7636's 43 to 128
}

async function challengeOf(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

// The redirect to the identity provider is a full page load, which loses this module's memory, so the
// code_verifier and state are kept in sessionStorage for that one round trip (this tab only) and removed
// as soon as the page is back. They are not credentials: the verifier is worth something only with the
// code the provider sends to the registered redirect URI, and only once. The hubd token, which is a
// credential, is never stored.
function savePending(p: Pending): void {
  sessionStorage.setItem(pendingKey, JSON.stringify(p));
}

function takePending(): Pending | null {
  const raw = sessionStorage.getItem(pendingKey);
  sessionStorage.removeItem(pendingKey);
  if (raw === null) {
    return null;
  }
  try {
    const v: unknown = JSON.parse(raw);
    const state = field(v, "state");
    const verifier = field(v, "verifier");
    return state !== "" && verifier !== "" ? { state, verifier } : null;
  } catch {
    return null;
  }
}

// redirectURI is this page without its query or fragment: the exact URI registered for the client.
function redirectURI(): string {
  return location.origin + location.pathname;
}

async function discover(config: Config): Promise<{ info: ApiInfo; oidc: Discovery } | null> {
  const rawInfo = await getJSON("Reading /api/info", `${config.base}/api/info`);
  const info: ApiInfo = {
    AuthIssuer: field(rawInfo, "AuthIssuer"),
    TokenExchangeEndpoint: field(rawInfo, "TokenExchangeEndpoint"),
  };
  if (info.AuthIssuer === "") {
    return null;
  }
  if (info.TokenExchangeEndpoint === "") {
    throw new AppError("/api/info names no TokenExchangeEndpoint");
  }
  const issuer = trimSlash(info.AuthIssuer);
  const rawOIDC = await getJSON("OIDC discovery", `${issuer}/.well-known/openid-configuration`);
  const oidc: Discovery = {
    issuer: field(rawOIDC, "issuer"),
    authorization_endpoint: field(rawOIDC, "authorization_endpoint"),
    token_endpoint: field(rawOIDC, "token_endpoint"),
  };
  // OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was fetched for.
  if (trimSlash(oidc.issuer) !== issuer) {
    throw new AppError(`the identity provider's discovery document names issuer ${oidc.issuer}, not ${info.AuthIssuer}`);
  }
  if (oidc.authorization_endpoint === "" || oidc.token_endpoint === "") {
    throw new AppError("the identity provider's discovery document names no authorization or token endpoint");
  }
  return { info, oidc };
}

async function startSignIn(config: Config, oidc: Discovery): Promise<void> {
  const pending: Pending = { state: randomString(), verifier: randomString() };
  const url = new URL(oidc.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: config.clientID,
    redirect_uri: redirectURI(),
    scope,
    state: pending.state,
    code_challenge: await challengeOf(pending.verifier),
    code_challenge_method: "S256",
  }).toString();
  savePending(pending);
  location.assign(url.toString());
}

// finishSignIn handles the provider's redirect back: it checks state, redeems the code and exchanges the
// provider's access token for a hubd token.
async function finishSignIn(config: Config, info: ApiInfo, oidc: Discovery, params: URLSearchParams): Promise<string> {
  const pending = takePending();
  // The code is single-use: take it out of the address bar and the history now.
  history.replaceState(null, "", redirectURI());
  const providerError = params.get("error");
  if (providerError !== null) {
    const description = params.get("error_description");
    throw new AppError(`The identity provider refused the sign-in: ${providerError}${description ? ": " + description : ""}`);
  }
  const code = params.get("code") ?? "";
  if (pending === null) {
    throw new AppError("This sign-in was not started in this tab (or was already finished): sign in again");
  }
  if (params.get("state") !== pending.state) {
    throw new AppError("The sign-in answer does not match the request that started it (state differs): sign in again");
  }
  const tokens = await postForm("Redeeming the authorization code", oidc.token_endpoint, {
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectURI(),
    client_id: config.clientID,
    code_verifier: pending.verifier,
  });
  const providerToken = field(tokens, "access_token");
  if (providerToken === "") {
    throw new AppError("The identity provider's token answer holds no access_token");
  }
  const exchanged = await postForm("Exchanging the token with hubd", info.TokenExchangeEndpoint, {
    grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
    subject_token: providerToken,
    subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
  });
  const hubdToken = field(exchanged, "access_token");
  if (hubdToken === "") {
    throw new AppError("hubd's token exchange answer holds no access_token");
  }
  return hubdToken;
}

async function showCaller(config: Config): Promise<void> {
  const me = (await getJSON("Reading /api/me", `${config.base}/api/me`, token)) as OrganizationMember;
  const orgID = me.OrganizationID ?? "";
  const extended = await getJSON("Reading the organization", `${config.base}/api/organization/${encodeURIComponent(orgID)}`, token);
  const org = (typeof extended === "object" && extended !== null && "Organization" in extended
    ? extended.Organization : {}) as Organization;
  element("user").textContent = me.DisplayName ? `${me.Username ?? ""} (${me.DisplayName})` : me.Username ?? "";
  element("organization").textContent = org.DisplayName ? `${org.Slug ?? ""} (${org.DisplayName})` : org.Slug ?? orgID;
  element("role").textContent = me.OrgRole ?? "";
  element("signed-in").hidden = false;
  element("signin").hidden = true;
  showStatus("Signed in.");
}

async function main(): Promise<void> {
  const config = await loadConfig();
  const found = await discover(config);
  if (found === null) {
    showStatus("This hubd does not support browser sign-in (its /api/info names no AuthIssuer).");
    return;
  }
  const { info, oidc } = found;
  const signin = element("signin");
  signin.addEventListener("click", () => {
    signin.setAttribute("disabled", "");
    startSignIn(config, oidc).catch((e: unknown) => {
      signin.removeAttribute("disabled");
      showError(e);
    });
  });
  element("signout").addEventListener("click", () => {
    token = "";
    element("signed-in").hidden = true;
    signin.hidden = false;
    signin.removeAttribute("disabled");
    showStatus("Signed out.");
  });

  const params = new URLSearchParams(location.search);
  if (params.has("code") || params.has("error")) {
    showStatus("Signing in…");
    try {
      token = await finishSignIn(config, info, oidc, params);
    } catch (e) {
      signin.hidden = false;
      showStatus("Not signed in.");
      throw e;
    }
    await showCaller(config);
    return;
  }
  showStatus("Not signed in.");
  signin.hidden = false;
}

main().catch(showError);
