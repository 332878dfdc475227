/**
 * `make bench-ui`: what streaming a long reply costs the browser's main thread,
 * and how big the release WASM bundle is. A benchmark, not a test: it prints
 * numbers and the targets beside them; only a broken run fails.
 *
 * The scripted model streams 20,000 characters of markdown one character per
 * chunk, about a millisecond apart. A Chromium trace gives every main-thread
 * task; each chunk the page reads is matched to the task that received it.
 * Rendering frames run as tasks of their own, so "busy per chunk" (all
 * main-thread time over the window, divided by its chunks) is reported too.
 * The bytes each page costs on the wire are `delivery.spec.ts`'s.
 */
import { expect, test } from "@playwright/test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLesson, hydrated, signUp, uniqueEmail } from "../tests/helpers";

type TraceEvent = { name: string; ph: string; ts: number; dur?: number; pid: number; tid: number; cat: string };

const WINDOW = 0.1; // the first and the last tenth of the chunks
const targetDir = join(__dirname, "..", "..", "target");

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

const ms = (v: number) => `${v.toFixed(3)} ms`;

test("sidebar streaming cost", async ({ page, browser }) => {
  test.setTimeout(300_000);
  await signUp(page, uniqueEmail("bench"));
  await createLesson(page, "Benchmark");
  await hydrated(page);

  // Note when each chunk of a response body reaches the page.
  await page.evaluate(() => {
    const w = window as any;
    w.__chunks = [] as number[];
    const read = ReadableStreamDefaultReader.prototype.read;
    ReadableStreamDefaultReader.prototype.read = function (this: ReadableStreamDefaultReader) {
      return read.call(this).then((r: ReadableStreamReadResult<unknown>) => {
        if (!r.done) w.__chunks.push(performance.now());
        return r;
      });
    } as any;
  });

  await browser.startTracing(page, { categories: ["toplevel", "disabled-by-default-devtools.timeline", "blink.user_timing"] });
  const zero = await page.evaluate(() => performance.mark("bench-zero").startTime);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("benchmark markdown");
  await box.press("Enter");
  const streaming = page.locator(".reply.streaming");
  await expect(streaming).toHaveCount(1);
  await expect(streaming).toHaveCount(0, { timeout: 240_000 });
  await expect(box).toBeEnabled();
  await expect(page.locator(".msg.assistant").last()).toContainText("Part 1: reading closely");
  const chunks: number[] = await page.evaluate(() => (window as any).__chunks);
  const trace = JSON.parse((await browser.stopTracing()).toString()) as { traceEvents: TraceEvent[] };

  const mark = trace.traceEvents.find((e) => e.name === "bench-zero");
  expect(mark, "the trace has the page's mark").toBeTruthy();
  const offset = mark!.ts - zero * 1000; // trace µs = page ms * 1000 + offset
  const tasks = trace.traceEvents
    .filter((e) => e.name === "RunTask" && e.ph === "X" && e.pid === mark!.pid && e.tid === mark!.tid)
    .sort((a, b) => a.ts - b.ts);
  expect(chunks.length, "the reply arrived in many chunks").toBeGreaterThan(1_000);

  // Each chunk's task; a task that took in several chunks is shared between them.
  const taskOf = chunks.map((t) => {
    const at = t * 1000 + offset;
    let lo = 0, hi = tasks.length - 1, found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (tasks[mid].ts <= at) { found = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return found >= 0 && at <= tasks[found].ts + (tasks[found].dur ?? 0) ? found : -1;
  });
  const perTask = new Map<number, number>();
  taskOf.forEach((i) => perTask.set(i, (perTask.get(i) ?? 0) + 1));

  const windowStats = (from: number, to: number) => {
    const costs = taskOf.slice(from, to).filter((i) => i >= 0).map((i) => (tasks[i].dur ?? 0) / 1000 / perTask.get(i)!);
    costs.sort((a, b) => a - b);
    const start = chunks[from] * 1000 + offset, end = chunks[to - 1] * 1000 + offset;
    const busy = tasks.filter((t) => t.ts >= start && t.ts <= end).reduce((s, t) => s + (t.dur ?? 0), 0) / 1000;
    return { chunks: to - from, matched: costs.length, p50: percentile(costs, 0.5), p95: percentile(costs, 0.95), max: costs[costs.length - 1], busyPerChunk: busy / (to - from) };
  };
  const n = chunks.length, w = Math.max(1, Math.floor(n * WINDOW));
  const first = windowStats(0, w), last = windowStats(n - w, n);
  const streamStart = chunks[0] * 1000 + offset, streamEnd = chunks[n - 1] * 1000 + offset;
  const during = tasks.filter((t) => t.ts + (t.dur ?? 0) >= streamStart && t.ts <= streamEnd);
  const longest = Math.max(...during.map((t) => (t.dur ?? 0) / 1000));
  const over50 = during.filter((t) => (t.dur ?? 0) > 50_000).length;

  const flat = last.p95 <= Math.max(2 * first.p95, first.p95 + 0.5);
  const lines = [
    `Sidebar streaming: ${n} chunks for 20,000 characters (${Math.round((streamEnd - streamStart) / 1000)} ms)`,
    `  first ${first.chunks} chunks: p50 ${ms(first.p50)}, p95 ${ms(first.p95)}, max ${ms(first.max)}, busy per chunk ${ms(first.busyPerChunk)}`,
    `  last  ${last.chunks} chunks: p50 ${ms(last.p50)}, p95 ${ms(last.p95)}, max ${ms(last.max)}, busy per chunk ${ms(last.busyPerChunk)}`,
    `  p95 per chunk under 2 ms at both ends: ${first.p95 < 2 && last.p95 < 2 ? "yes" : "NO"}; flat (end within 2x of start): ${flat ? "yes" : "NO"}`,
    `  longest main-thread task while streaming: ${ms(longest)}; tasks over 50 ms: ${over50} (target 0)`,
  ];
  console.log("\n" + lines.join("\n") + "\n");
  mkdirSync(join(targetDir, "bench"), { recursive: true });
  writeFileSync(join(targetDir, "bench", "sidebar.json"), JSON.stringify({ chunks: n, first, last, longest, over50 }, null, 2));
});
