import { expect, test } from "./csp";
import { createLesson, hydrated, signUp, uniqueEmail } from "./helpers";

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
  const url = await createLesson(page, "Delivery");
  await hydrated(page);
  const wasm = seen.filter((s) => new URL(s.url).pathname.endsWith(".wasm"));
  expect(wasm.length, "the lesson page loads the bundle").toBeGreaterThan(0);
  expect(wasm[0].status).toBe(200);
  expect(wasm[0].encoding, "the bundle is compressed on the wire").toMatch(/^(br|gzip)$/);

  // A second visit asks whether it changed and downloads nothing.
  const before = seen.length;
  await page.goto("/");
  await page.goto(url);
  await hydrated(page);
  const again = seen.slice(before).filter((s) => new URL(s.url).pathname.endsWith(".wasm"));
  for (const s of again) {
    const sizes = await s.request.sizes();
    expect(sizes.responseBodySize, `the bundle again (${s.status})`).toBe(0);
  }
});
