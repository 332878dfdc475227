import { expect, test } from "./csp";
import { hydrated, lastReply, openLesson, send } from "./helpers";

test.beforeEach(async ({ page }) => {
  page.on("dialog", (d) => { throw new Error(`unexpected dialog: ${d.message()}`); });
});

test("a reply cut off by a dropped stream keeps its text, says so and offers Retry, after a reload too", async ({ page }) => {
  await openLesson(page, "cutoff");
  await send(page, "Please end the stream early");
  const reply = lastReply(page);
  await expect(reply.getByRole("alert")).toContainText("The reply was cut off");
  await expect(reply.locator(".reply")).toHaveText("Here is the first half of");
  await expect(reply.getByRole("alert").getByRole("button", { name: "Retry" })).toBeVisible();
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();

  await page.reload();
  await hydrated(page);
  const again = lastReply(page);
  await expect(again.locator(".reply")).toHaveText("Here is the first half of");
  await expect(again.getByRole("alert")).toContainText("The reply was cut off");
  await expect(again.getByRole("alert").getByRole("button", { name: "Retry" })).toBeVisible();
});

test("a reasoning model's thinking folds away when the reply starts, opens on demand and survives a reload", async ({ page }) => {
  await openLesson(page, "thinking");
  await send(page, "Think it through, then add a true-or-false exercise");
  const reply = lastReply(page);
  await expect(reply).toContainText("Which topic should the statements cover?");
  const toggle = reply.getByRole("button", { name: "Thinking" });
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await expect(reply.locator(".reasoning")).toHaveCount(0);
  await toggle.click();
  await expect(reply.locator(".reasoning")).toContainText("I should read the rules first.");
  await expect(reply.locator(".reply")).not.toContainText("read the rules first");
  await toggle.click();
  await expect(reply.locator(".reasoning")).toHaveCount(0);

  await page.reload();
  await hydrated(page);
  const stored = lastReply(page);
  await stored.getByRole("button", { name: "Thinking" }).click();
  await expect(stored.locator(".reasoning")).toHaveText(
    "The teacher wants a true-or-false exercise. I should read the rules first. Rules read; now ask about the topic.",
  );
});

test("Stop pressed before the reply has started is not lost", async ({ page }) => {
  await openLesson(page, "earlystop");
  // Hold the request that starts the turn, so Stop comes before its id.
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => { release = resolve; });
  await page.route("**/api/chat/stream", async (route) => {
    await held;
    await route.continue();
  });
  await send(page, "Hold on a second");
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(page.getByRole("button", { name: "Stopping…" })).toBeDisabled();
  release();
  await expect(lastReply(page).getByText("Stopped.")).toBeVisible();
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
});
