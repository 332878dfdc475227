import { readFileSync } from "node:fs";
import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { hydrated, lastReply, openLesson, send } from "./helpers";

const picker = (page: Page) => page.getByRole("combobox", { name: "Chat" });
const chatTitles = (page: Page) => picker(page).locator("option");
const list = (page: Page) => page.locator(".messages");

/** How far the conversation is scrolled from its end, in pixels. */
const fromBottom = (page: Page) => list(page).evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);

test("chats can be started, switched, renamed and deleted, and stay that way after a reload", async ({ page }) => {
  await openLesson(page, "chats");
  await send(page, "test");
  await expect(lastReply(page)).toContainText("Hello! I'm here");
  await expect(chatTitles(page)).toHaveText(["test"]);

  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page.getByText("Hello! Ask me about this lesson")).toBeVisible();
  await expect(page.locator(".msg")).toHaveCount(0);
  await send(page, "Add an exercise");
  await expect(lastReply(page)).toContainText("What kind of exercise would you like");
  await expect(chatTitles(page)).toHaveText(["Add an exercise", "test"]);

  // Switching shows the other conversation.
  await picker(page).selectOption({ label: "test" });
  await expect(page.locator(".msg.user .bubble")).toHaveText(["test"]);
  await expect(lastReply(page)).toContainText("Hello! I'm here");

  // Rename asks for the new name, offering the old one.
  page.once("dialog", async (d) => {
    expect(d.type()).toBe("prompt");
    expect(d.defaultValue()).toBe("test");
    await d.accept("Greetings");
  });
  await page.getByRole("button", { name: "Rename" }).click();
  await expect(chatTitles(page)).toContainText(["Greetings"]);

  // Saying no to Delete keeps the chat.
  page.once("dialog", (d) => d.dismiss());
  await page.getByRole("button", { name: "Delete" }).click();
  await page.reload();
  await hydrated(page);
  await expect(chatTitles(page)).toHaveCount(2);
  await expect(chatTitles(page)).toContainText(["Greetings", "Add an exercise"]);

  // Delete removes it, here and after a reload; the other chat opens.
  await picker(page).selectOption({ label: "Greetings" });
  await expect(page.locator(".msg.user .bubble")).toHaveText(["test"]);
  page.once("dialog", (d) => d.accept());
  await page.getByRole("button", { name: "Delete" }).click();
  await expect(chatTitles(page)).toHaveText(["Add an exercise"]);
  await expect(page.locator(".msg.user .bubble")).toHaveText(["Add an exercise"]);
  await page.reload();
  await hydrated(page);
  await expect(chatTitles(page)).toHaveText(["Add an exercise"]);
  await expect(page.locator(".msg.user .bubble")).toHaveText(["Add an exercise"]);
});

test("the conversation follows a reply only while the reader is at the bottom", async ({ page }) => {
  await page.setViewportSize({ width: 1100, height: 520 });
  await openLesson(page, "scroll");
  await send(page, "Give me a long answer");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await send(page, "Another long answer please");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  // Long enough to scroll, and followed to its end.
  expect(await list(page).evaluate((el) => el.scrollHeight - el.clientHeight)).toBeGreaterThan(200);
  await expect.poll(() => fromBottom(page)).toBeLessThan(40);
  await expect(page.getByRole("button", { name: "Jump to latest" })).toHaveCount(0);

  // Sending scrolls to the new message; scrolling up while the reply runs stops following.
  await send(page, "Hold on a second");
  await expect(lastReply(page)).toContainText("one moment");
  await expect.poll(() => fromBottom(page)).toBeLessThan(40);
  await list(page).hover();
  await page.mouse.wheel(0, -5000);
  await expect.poll(() => list(page).evaluate((el) => el.scrollTop)).toBe(0);
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(lastReply(page).getByText("Stopped.")).toBeAttached();
  const jump = page.getByRole("button", { name: "Jump to latest" });
  await expect(jump).toBeVisible();
  expect(await list(page).evaluate((el) => el.scrollTop)).toBe(0);

  await jump.click();
  await expect.poll(() => fromBottom(page)).toBeLessThan(40);
  await expect(jump).toHaveCount(0);
});

test("every sidebar control is reachable by keyboard and shows where the focus is", async ({ page }) => {
  await openLesson(page, "keyboard");
  await send(page, "Add a fill-in-the-blank exercise about French verbs");
  const toggle = lastReply(page).getByRole("button", { name: "Done (2 steps)" });
  await expect(toggle).toBeVisible();
  // The steps fold as soon as the reply's text begins; the chat's controls
  // come back when it ends.
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();

  // Tab from the chat picker to the message box, noting each stop.
  await picker(page).focus();
  const stops: string[] = [];
  for (let i = 0; i < 20; i++) {
    const here = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const name = el.getAttribute("aria-label") ?? (el.textContent ?? "").trim();
      const ring = getComputedStyle(el).boxShadow !== "none" || getComputedStyle(el).outlineStyle !== "none";
      return { name: el.tagName === "SELECT" ? "Chat" : name, ring, visible: el.matches(":focus-visible") };
    });
    stops.push(here.name);
    expect(here.visible && here.ring, `a visible focus ring on ${here.name}`).toBe(true);
    if (here.name === "Message") break;
    await page.keyboard.press("Tab");
  }
  expect(stops).toEqual(["Chat", "New chat", "Rename", "Delete", "Export this chat as Markdown", "Export this chat as JSON", "Done (2 steps)", "Message"]);

  // The steps open and close from the keyboard, and say so.
  await toggle.focus();
  await page.keyboard.press("Enter");
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await page.keyboard.press("Tab");
  await expect(page.locator(":focus")).toHaveText(/Checking fill-blanks rules/);
  await page.keyboard.press("Enter");
  await expect(lastReply(page).locator(".step details").first()).toHaveAttribute("open", "");
  await toggle.focus();
  await page.keyboard.press(" ");
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
});

test("the open chat downloads as Markdown and as JSON", async ({ page }) => {
  await openLesson(page, "export");
  await send(page, "Add a fill-in-the-blank exercise about French verbs");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  const [md] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export this chat as Markdown" }).click()]);
  expect(md.suggestedFilename()).toMatch(/\.md$/);
  const text = readFileSync((await md.path())!, "utf8");
  expect(text).toContain("## You · ");
  expect(text).toContain("Add a fill-in-the-blank exercise about French verbs");
  expect(text).toMatch(/- Step: .*\(done\)/);
  expect(text).toContain("  - Added exercise 1 (Fill in the blanks");
  const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export this chat as JSON" }).click()]);
  const data = JSON.parse(readFileSync((await json.path())!, "utf8"));
  expect(data.messages).toHaveLength(2);
  expect(data.lessonTitle).toBe("Verbs");
});
