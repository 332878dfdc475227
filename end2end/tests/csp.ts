import { expect, test as base } from "@playwright/test";

/**
 * Every test runs with the server's Content-Security-Policy on, and fails if
 * the browser reports a violation: a blocked script, style, image or
 * request means the policy and the app disagree. A test that provokes a
 * violation on purpose takes it out of `cspViolations` itself.
 */
export const test = base.extend<{ cspViolations: string[] }>({
  cspViolations: [
    async ({ page }, use) => {
      const seen: string[] = [];
      page.on("console", (msg) => {
        if (msg.text().includes("Content Security Policy")) seen.push(msg.text());
      });
      await use(seen);
      expect(seen, "Content-Security-Policy violations").toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };
