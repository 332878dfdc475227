/**
 * `make bench-ui`: what typing costs in the lesson editor on a long lesson.
 * A lesson of about twenty printed pages (twenty sections of a heading, six
 * paragraphs of some eighty words and an exercise: ~10,000 words) is opened
 * in the release build; 300 characters are typed into a paragraph in its
 * middle, 30 ms apart, as a quick typist would.
 *
 * Two figures per keystroke, from the key event's `timeStamp`:
 * - the keystroke's task: until a message posted from the key event runs,
 *   that is once the browser and the editor have both handled it (the
 *   character in the text, its runs read, the save scheduled);
 * - to the painted frame: the next animation frame, and a message posted
 *   from it, which runs once that frame is painted. This one is bound to
 *   the display's frame clock (16.7 ms at 60 Hz), so it is reported beside
 *   the same typing into a bare `contenteditable` holding the same text,
 *   measured in the same run: the peer no editor can beat.
 * Both are measured twice: in the test's browser, whose frames follow a
 * 60 Hz clock, and in a second Chromium started without that clock
 * (`--disable-gpu-vsync --disable-frame-rate-limit`), which draws a frame
 * as soon as there is something to draw. The second is the budget's
 * figure: key to painted character, the editor's work and the browser's,
 * with no wait for the next tick of a display. Long tasks (over 50 ms) are
 * counted by the browser's own observer. A benchmark: it prints the
 * figures beside their budgets (p95 under 16 ms, no task over 50 ms); only
 * a broken run fails.
 */
import { chromium, expect, test, type Page } from "@playwright/test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLesson, editor, hydrated, signUp, uniqueEmail } from "../tests/helpers";

const targetDir = join(__dirname, "..", "..", "target");
const SECTIONS = 20;
const TYPED = 300;

const sentence = (k: number) => `Sentence ${k} says something a pupil could read aloud, with a few longer words like photosynthesis and evaporation in it.`;

function longLesson(): string {
  const out = ["<lesson>", "<h1>The long lesson</h1>"];
  for (let s = 1; s <= SECTIONS; s++) {
    out.push(`<h2>Part ${s}</h2>`);
    for (let p = 1; p <= 6; p++) {
      out.push(`<p>${[1, 2, 3, 4].map((k) => sentence(s * 100 + p * 10 + k)).join(" ")}</p>`);
    }
    out.push(
      s % 2 === 0
        ? `<exercise type="multiple-choice"><question><prompt>Question ${s}?</prompt><option correct="true">Yes</option><option>No</option><option>Maybe</option></question></exercise>`
        : `<exercise type="fill-blanks"><p>Water boils at <blank answer="100" hint="a number"/> degrees in part ${s}.</p></exercise>`,
    );
  }
  out.push("</lesson>");
  return out.join("\n");
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

/** Starts noting, for every key pressed from now on, its task and its
 *  painted frame, and every long task. */
async function instrument(page: Page) {
  await page.evaluate(() => {
    const w = window as any;
    w.__task = [] as number[];
    w.__frame = [] as number[];
    w.__long = [] as number[];
    new PerformanceObserver((list) => list.getEntries().forEach((e) => w.__long.push(e.duration))).observe({ type: "longtask" });
    document.addEventListener("keydown", (ev) => {
      const start = ev.timeStamp;
      const after = new MessageChannel();
      after.port1.onmessage = () => w.__task.push(performance.now() - start);
      after.port2.postMessage(0);
      requestAnimationFrame(() => {
        const painted = new MessageChannel();
        painted.port1.onmessage = () => w.__frame.push(performance.now() - start);
        painted.port2.postMessage(0);
      });
    }, { capture: true });
  });
}

type Figures = { task: number[]; frame: number[]; long: number[]; elements?: number };

async function figures(page: Page): Promise<Figures> {
  const f = await page.evaluate(() => ({ task: (window as any).__task, frame: (window as any).__frame, long: (window as any).__long }));
  f.task.sort((a: number, b: number) => a - b);
  f.frame.sort((a: number, b: number) => a - b);
  return f;
}

const line = (f: number[]) => `p50 ${percentile(f, 0.5).toFixed(1)} ms, p95 ${percentile(f, 0.95).toFixed(1)} ms, max ${f[f.length - 1].toFixed(1)} ms`;

/** Types `text` into the paragraph in the middle of the lesson at `url`,
 *  then into a bare `contenteditable` holding the same text. */
async function typeBoth(page: Page, url: string, xml: string, text: string): Promise<{ ed: Figures; bare: Figures }> {
  await page.goto(url);
  await hydrated(page);
  await editor(page).waitFor();
  const middle = editor(page).getByRole("textbox", { name: "Paragraph" }).nth(SECTIONS * 3);
  await expect(middle).toBeVisible();
  await middle.click();
  await page.keyboard.press("End");
  await instrument(page);
  await page.keyboard.type(text, { delay: 30 });
  await expect(editor(page).getByRole("status").first()).toHaveText("Saved", { timeout: 30_000 });
  // The browser's work per key grows with the page's elements.
  const elements = await page.evaluate(() => document.getElementsByTagName("*").length);
  const ed = { ...(await figures(page)), elements };
  expect(ed.task.length).toBeGreaterThanOrEqual(text.length);

  // The peer: the same text in one bare contenteditable, nothing listening.
  const paragraphs = xml.match(/<p>[^<]*<\/p>|<h2>[^<]*<\/h2>/g) ?? [];
  await page.goto("about:blank");
  await page.setContent(`<!doctype html><html><body><div contenteditable="true" id="bare">${paragraphs.join("")}</div></body></html>`);
  await page.locator("#bare p").nth(SECTIONS * 3).click();
  await page.keyboard.press("End");
  await instrument(page);
  await page.keyboard.type(text, { delay: 30 });
  return { ed, bare: await figures(page) };
}

test("typing in the editor on a twenty-page lesson", async ({ page }, info) => {
  test.setTimeout(300_000);
  await signUp(page, uniqueEmail("typing"));
  const url = await createLesson(page, "The long lesson");
  const id = new URL(url).pathname.split("/").pop();
  const origin = new URL(url).origin;
  const xml = longLesson();
  const saved = await page.request.put(`/api/lessons/${id}/document`, { data: { xml, baseRevision: 1 }, headers: { Origin: origin } });
  expect(saved.ok()).toBeTruthy();
  const words = xml.replace(/<[^>]+>/g, " ").split(/\s+/).filter(Boolean).length;
  const text = "and then the water rises into the cold air where it forms clouds ".repeat(10).slice(0, TYPED);

  // At 60 Hz, in the test's own browser.
  const clocked = await typeBoth(page, url, xml, text);
  // Without the frame clock: a second browser, signed in as the same teacher.
  const launch = info.project.use.launchOptions ?? {};
  const free = await chromium.launch({ ...launch, args: [...(launch.args ?? []), "--disable-gpu-vsync", "--disable-frame-rate-limit"] });
  const ctx = await free.newContext({ baseURL: info.project.use.baseURL });
  await ctx.addCookies(await page.context().cookies());
  const unclocked = await typeBoth(await ctx.newPage(), url, xml, text);
  await free.close();

  const { ed, bare } = unclocked;
  const over50 = [...clocked.ed.long, ...ed.long].filter((d) => d > 50).length;
  const longest = Math.max(0, ...clocked.ed.long, ...ed.long);
  const p95 = percentile(ed.frame, 0.95);
  const lines = [
    `Editor typing: ${TYPED} keystrokes into a paragraph in the middle of a ${words}-word lesson (${SECTIONS} sections, ${SECTIONS} exercises)`,
    `  key to painted frame, no frame clock: ${line(ed.frame)}; p95 under 16 ms: ${p95 < 16 ? "yes" : "NO"} (bare contenteditable: ${line(bare.frame)})`,
    `  key to painted frame at 60 Hz: ${line(clocked.ed.frame)} (bare contenteditable: ${line(clocked.bare.frame)})`,
    `  the keystroke's task: ${line(ed.task)} (bare contenteditable: ${line(bare.task)})`,
    `  tasks over 50 ms while typing and saving: ${over50} (target 0)${longest ? `; longest ${longest.toFixed(1)} ms` : ""}`,
    `  elements on the editor's page: ${ed.elements}`,
  ];
  console.log("\n" + lines.join("\n") + "\n");
  mkdirSync(join(targetDir, "bench"), { recursive: true });
  const stats = (f: number[]) => ({ p50: percentile(f, 0.5), p95: percentile(f, 0.95), max: f[f.length - 1] });
  const ms = (f: number[], p: number) => `${percentile(f, p).toFixed(1)} ms`;
  // The current figures, for people: docs/benchmarks/editor.md (history is git's).
  const docs = join(__dirname, "..", "..", "docs", "benchmarks");
  mkdirSync(docs, { recursive: true });
  writeFileSync(join(docs, "editor.md"), [
    "# Typing in the lesson editor",
    "",
    "Written by `make bench-ui` (`end2end/bench/editor.spec.ts`): a release build in Chromium, " +
      `${TYPED} keys typed 30 ms apart into a paragraph in the middle of a ${words}-word lesson ` +
      `(${SECTIONS} sections, ${SECTIONS} exercises), beside the same typing into a bare \`contenteditable\` holding the same text, in the same run. ` +
      "Twice: in a browser whose frames follow a 60 Hz clock (a key waits for the next tick, up to 16.7 ms, whatever the page does), " +
      "and in one started without that clock (`--disable-gpu-vsync --disable-frame-rate-limit`), which paints as soon as there is something to paint: the budget's figure.",
    "",
    "| | editor | bare contenteditable | budget |",
    "|---|---|---|---|",
    `| key to painted frame, no frame clock, p50 | ${ms(ed.frame, 0.5)} | ${ms(bare.frame, 0.5)} | |`,
    `| key to painted frame, no frame clock, p95 | ${ms(ed.frame, 0.95)} | ${ms(bare.frame, 0.95)} | < 16 ms |`,
    `| key to painted frame at 60 Hz, p50 | ${ms(clocked.ed.frame, 0.5)} | ${ms(clocked.bare.frame, 0.5)} | |`,
    `| key to painted frame at 60 Hz, p95 | ${ms(clocked.ed.frame, 0.95)} | ${ms(clocked.bare.frame, 0.95)} | |`,
    `| tasks over 50 ms | ${over50} | | 0 |`,
    `| elements on the page | ${ed.elements} | | |`,
    "",
  ].join("\n"));
  writeFileSync(join(targetDir, "bench", "editor.json"), JSON.stringify({
    words, keystrokes: TYPED,
    unclocked: { editor: { task: stats(ed.task), frame: stats(ed.frame) }, bare: { task: stats(bare.task), frame: stats(bare.frame) } },
    clocked: { editor: { task: stats(clocked.ed.task), frame: stats(clocked.ed.frame) }, bare: { task: stats(clocked.bare.task), frame: stats(clocked.bare.frame) } },
    over50, longest, elements: ed.elements,
  }, null, 2));
});
