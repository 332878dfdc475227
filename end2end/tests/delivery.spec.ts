import { expect, test } from "./csp";
import { createLesson, editor, hydrated, signUp, uniqueEmail } from "./helpers";

// What a page costs the browser to receive: pages without an island load no
// code at all; the lesson page's bundle comes compressed, and a second visit
// does not download it again.

const isCode = (url: string) => /\/pkg\/.*\.(wasm|js)$/.test(new URL(url).pathname);

test("a page without an island loads no code; the bundle comes compressed and is not downloaded twice", async ({ page }) => {
  const seen: { url: string; status: number; encoding?: string; request: import("@playwright/test").Request }[] = [];
  page.on("response", (r) => seen.push({ url: r.url(), status: r.status(), encoding: r.headers()["content-encoding"], request: r.request() }));

  // Sign-in, sign-up and the lessons list: drawn whole by the server.
  await page.goto("/signin");
  await expect(page.locator("body[data-hydrated=true]")).toHaveCount(1);
  await signUp(page, uniqueEmail("delivery"));
  await expect(page.locator("body[data-hydrated=true]")).toHaveCount(1);
  await page.goto("/school");
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  expect(seen.filter((s) => isCode(s.url)).map((s) => s.url), "no page so far has an island").toEqual([]);
  // The pages themselves come compressed.
  const pageResponse = seen.find((s) => new URL(s.url).pathname === "/school" && s.status === 200);
  expect(pageResponse?.encoding, "the School page is compressed").toMatch(/^(br|gzip)$/);

  // The lesson page has one: its bundle arrives compressed.
  const inFlight = new Set<import("@playwright/test").Request>();
  page.on("request", (r) => { if (isCode(r.url())) inFlight.add(r); });
  page.on("requestfinished", (r) => inFlight.delete(r));
  page.on("requestfailed", (r) => inFlight.delete(r));
  const url = await createLesson(page, "Delivery");
  await hydrated(page);
  // The parts loaded once the page is live (the conversation, the editor)
  // arrive whole before the page is left: a part cut off by leaving is not
  // kept, and would be fetched again below.
  await expect.poll(() => seen.some((s) => /\/split_message_list_view.*\.wasm$/.test(new URL(s.url).pathname))).toBe(true);
  await expect(editor(page)).toBeVisible();
  await expect.poll(() => inFlight.size).toBe(0);
  const wasm = seen.filter((s) => new URL(s.url).pathname.endsWith(".wasm"));
  expect(wasm.length, "the lesson page loads the bundle").toBeGreaterThan(0);
  expect(wasm[0].status).toBe(200);
  expect(wasm[0].encoding, "the bundle is compressed on the wire").toMatch(/^(br|gzip)$/);

  // A second visit downloads no code: the files are named after their
  // content and kept (`immutable`), so the browser takes them from its
  // cache. Counted as the browser counts bytes received (DevTools protocol).
  const wasmUrl = wasm[0].url;
  expect(wasm[0].url, "the bundle is named after its content").toMatch(/\/pkg\/margin\.[A-Za-z0-9_-]+\.wasm$/);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  const wasmRequests = new Set<string>();
  let received = 0;
  let asked = 0;
  cdp.on("Network.requestWillBeSent", (e) => {
    if (e.request.url.endsWith(".wasm")) { wasmRequests.add(e.requestId); asked++; }
  });
  cdp.on("Network.loadingFinished", (e) => {
    if (wasmRequests.has(e.requestId)) received += e.encodedDataLength;
  });
  const before = seen.length;
  await page.goto("/");
  await page.goto(url);
  await hydrated(page);
  expect(asked, "the lesson page needs the bundle again").toBeGreaterThan(0);
  expect(received, "bytes of the bundle received on the second visit").toBe(0);
  const again = seen.slice(before).filter((s) => s.url === wasmUrl);
  for (const s of again) expect(s.status, "taken from the cache, not asked after").toBe(200);
});

test("the XML editor and the history load their code when first opened, and work after a reload", async ({ page }) => {
  const parts: string[] = [];
  page.on("request", (r) => {
    const name = new URL(r.url()).pathname.split("/").pop() ?? "";
    if (name.endsWith(".wasm")) parts.push(name);
  });
  const loaded = (what: string) => parts.some((p) => p.startsWith(`split_${what}_view`));
  await signUp(page, uniqueEmail("split"));
  const url = await createLesson(page, "Split");
  await hydrated(page);
  // The conversation's part comes once the page is live; the tabs' parts not yet.
  await expect.poll(() => loaded("message_list")).toBe(true);
  expect(loaded("xml_editor") || loaded("history"), "no tab opened yet").toBe(false);

  await page.getByRole("tab", { name: "XML" }).click();
  await expect(page.getByLabel("Lesson XML")).toHaveValue(/<lesson/);
  expect(loaded("xml_editor")).toBe(true);
  await page.getByRole("tab", { name: "History" }).click();
  await expect(page.getByRole("list", { name: "Versions" }).getByRole("button")).toHaveCount(1);
  expect(loaded("history")).toBe(true);

  // After a reload, the same parts work again.
  await page.goto(url);
  await hydrated(page);
  await page.getByRole("tab", { name: "History" }).click();
  await expect(page.getByRole("list", { name: "Versions" }).getByRole("button")).toHaveCount(1);
  await page.getByRole("tab", { name: "XML" }).click();
  await expect(page.getByLabel("Lesson XML")).toHaveValue(/<lesson/);
});
