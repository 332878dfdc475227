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
 * Long tasks (over 50 ms) are counted by the browser's own observer. A
 * benchmark: it prints the figures beside their budgets (p95 under 16 ms,
 * no task over 50 ms); only a broken run fails.
 */
import { expect, test, type Page } from "@playwright/test";
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

type Figures = { task: number[]; frame: number[]; long: number[] };

async function figures(page: Page): Promise<Figures> {
  const f = await page.evaluate(() => ({ task: (window as any).__task, frame: (window as any).__frame, long: (window as any).__long }));
  f.task.sort((a: number, b: number) => a - b);
  f.frame.sort((a: number, b: number) => a - b);
  return f;
}

const line = (f: number[]) => `p50 ${percentile(f, 0.5).toFixed(1)} ms, p95 ${percentile(f, 0.95).toFixed(1)} ms, max ${f[f.length - 1].toFixed(1)} ms`;

test("typing in the editor on a twenty-page lesson", async ({ page }) => {
  test.setTimeout(300_000);
  await signUp(page, uniqueEmail("typing"));
  const url = await createLesson(page, "The long lesson");
  const id = new URL(url).pathname.split("/").pop();
  const origin = new URL(url).origin;
  const xml = longLesson();
  const saved = await page.request.put(`/api/lessons/${id}/document`, { data: { xml, baseRevision: 1 }, headers: { Origin: origin } });
  expect(saved.ok()).toBeTruthy();
  const words = xml.replace(/<[^>]+>/g, " ").split(/\s+/).filter(Boolean).length;
  await page.reload();
  await hydrated(page);
  await editor(page).waitFor();
  const middle = editor(page).getByRole("textbox", { name: "Paragraph" }).nth(SECTIONS * 3);
  await expect(middle).toBeVisible();
  await middle.click();
  await page.keyboard.press("End");

  await instrument(page);
  const text = "and then the water rises into the cold air where it forms clouds ".repeat(10).slice(0, TYPED);
  await page.keyboard.type(text, { delay: 30 });
  await expect(editor(page).getByRole("status").first()).toHaveText("Saved", { timeout: 30_000 });
  const ed = await figures(page);
  expect(ed.task.length).toBeGreaterThanOrEqual(TYPED);

  // The peer: the same text in one bare contenteditable, nothing listening.
  const paragraphs = xml.match(/<p>[^<]*<\/p>|<h2>[^<]*<\/h2>/g) ?? [];
  await page.goto("about:blank");
  await page.setContent(`<!doctype html><html><body><div contenteditable="true" id="bare">${paragraphs.join("")}</div></body></html>`);
  await page.locator("#bare p").nth(SECTIONS * 3).click();
  await page.keyboard.press("End");
  await instrument(page);
  await page.keyboard.type(text, { delay: 30 });
  const bare = await figures(page);

  const over50 = ed.long.filter((d) => d > 50).length;
  const p95 = percentile(ed.frame, 0.95);
  const lines = [
    `Editor typing: ${TYPED} keystrokes into a paragraph in the middle of a ${words}-word lesson (${SECTIONS} sections, ${SECTIONS} exercises)`,
    `  the keystroke's task: ${line(ed.task)} (a bare contenteditable with the same text: ${line(bare.task)})`,
    `  key to painted frame: ${line(ed.frame)}; p95 under 16 ms: ${p95 < 16 ? "yes" : "NO"} (bare contenteditable: ${line(bare.frame)})`,
    `  tasks over 50 ms while typing and saving: ${over50} (target 0)${ed.long.length ? `; longest ${Math.max(...ed.long).toFixed(1)} ms` : ""}`,
  ];
  console.log("\n" + lines.join("\n") + "\n");
  mkdirSync(join(targetDir, "bench"), { recursive: true });
  const stats = (f: number[]) => ({ p50: percentile(f, 0.5), p95: percentile(f, 0.95), max: f[f.length - 1] });
  // The current figures, for people: docs/benchmarks/editor.md (history is git's).
  const docs = join(__dirname, "..", "..", "docs", "benchmarks");
  mkdirSync(docs, { recursive: true });
  writeFileSync(join(docs, "editor.md"), [
    "# Typing in the lesson editor",
    "",
    "Written by `make bench-ui` (`end2end/bench/editor.spec.ts`): a release build in Chromium, " +
      `${TYPED} keys typed 30 ms apart into a paragraph in the middle of a ${words}-word lesson ` +
      `(${SECTIONS} sections, ${SECTIONS} exercises), beside the same typing into a bare \`contenteditable\` holding the same text, in the same run.`,
    "",
    "| | editor | bare contenteditable | budget |",
    "|---|---|---|---|",
    `| key to painted frame, p50 | ${percentile(ed.frame, 0.5).toFixed(1)} ms | ${percentile(bare.frame, 0.5).toFixed(1)} ms | |`,
    `| key to painted frame, p95 | ${p95.toFixed(1)} ms | ${percentile(bare.frame, 0.95).toFixed(1)} ms | < 16 ms |`,
    `| tasks over 50 ms | ${over50} | | 0 |`,
    "",
  ].join("\n"));
  writeFileSync(join(targetDir, "bench", "editor.json"), JSON.stringify({ words, keystrokes: TYPED, editor: { task: stats(ed.task), frame: stats(ed.frame) }, bare: { task: stats(bare.task), frame: stats(bare.frame) }, over50, longTasks: ed.long }, null, 2));
});
