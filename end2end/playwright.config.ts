import { defineConfig } from "@playwright/test";

// `cargo leptos end-to-end` starts the server on LEPTOS_SITE_ADDR before this runs.
const baseURL = `http://${process.env.LEPTOS_SITE_ADDR ?? "127.0.0.1:3000"}`;
// `make bench-ui` sets MARGIN_BENCH=ui to run the benchmarks instead of the tests.
const bench = process.env.MARGIN_BENCH === "ui";

export default defineConfig({
  testDir: bench ? "./bench" : "./tests",
  timeout: bench ? 300_000 : 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  use: {
    baseURL,
    trace: bench ? "off" : "retain-on-failure",
    launchOptions: {
      // Debian's Chromium; Playwright's own browser download is not available here.
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
});
