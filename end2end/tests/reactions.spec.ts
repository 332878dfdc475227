import { expect, test } from "./csp";
import { createLesson, editable, editor, hydrated, lastReply, send, signUp, uniqueEmail } from "./helpers";

// The assistant reacting to what happens: material added together gets one
// automatic reply, shown under a note of what started it; and text selected
// in the lesson can be asked about.

test("a new lesson is greeted by the assistant on its own, once", async ({ page }) => {
  await signUp(page, uniqueEmail("greet"), { reactions: true });
  await createLesson(page, "Volcanoes");
  await hydrated(page);
  const note = page.locator(".msg.trigger");
  await expect(note).toHaveText("You created this lesson");
  await expect(lastReply(page)).toContainText("I'm here when you need me");
  await expect(page.locator(".msg.user")).toHaveCount(0);
  // Opened again the same day: no second greeting.
  await page.reload();
  await hydrated(page);
  await expect(note).toHaveText("You created this lesson");
  await expect(page.locator(".msg.assistant")).toHaveCount(1);
});

test("two files added together get one automatic reply that names both", async ({ page }) => {
  // Switched on once the lesson exists: the reply is to the material alone.
  await signUp(page, uniqueEmail("react"));
  await createLesson(page, "Rivers");
  const material = page.locator("#material");
  await expect(material.getByLabel("Let the assistant react on its own")).not.toBeChecked();
  await material.getByLabel("Let the assistant react on its own").check();
  await material.getByRole("button", { name: "Update setting" }).click();
  await expect(material.getByLabel("Let the assistant react on its own")).toBeChecked();
  await material.getByLabel(/Files/).setInputFiles([
    { name: "Notes.txt", mimeType: "text/plain", buffer: Buffer.from("Rivers begin in the hills.\nThey flow to the sea.") },
    { name: "Deltas.md", mimeType: "text/markdown", buffer: Buffer.from("# Deltas\n\nDeltas form where rivers meet the sea.") },
  ]);
  await material.getByRole("button", { name: "Add material" }).click();
  await expect(material.getByRole("list", { name: "Sources" }).getByRole("listitem")).toHaveCount(2);
  await hydrated(page);
  // The note of what happened stands in place of a message, and the reply names both files.
  const note = page.locator(".msg.trigger");
  await expect(note).toHaveText("You added Notes.txt and Deltas.md");
  await expect(lastReply(page)).toContainText("I read your new material (Notes.txt, Deltas.md). It begins: Rivers begin in the hills.");
  await expect(page.locator(".msg.user")).toHaveCount(0);
  // Kept as it was over a reload, still one reply.
  await page.reload();
  await hydrated(page);
  await expect(note).toHaveText("You added Notes.txt and Deltas.md");
  await expect(page.locator(".msg.assistant")).toHaveCount(1);
});

test("a sentence selected in the lesson is asked about, quoted in the message", async ({ page }) => {
  await signUp(page, uniqueEmail("select"));
  await createLesson(page, "Rivers");
  await hydrated(page);
  await editor(page).waitFor();
  const sentence = editable(page, "b1");
  await sentence.selectText();
  await sentence.dispatchEvent("mouseup");
  await page.getByRole("button", { name: "Ask about this" }).click();
  const chip = page.locator(".chat-input .selection-chip");
  await expect(chip).toHaveText("Rivers");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeFocused();
  // It can be taken back, and chosen again.
  await page.getByRole("button", { name: "Remove the selection" }).click();
  await expect(chip).toBeHidden();
  await sentence.selectText();
  await sentence.dispatchEvent("mouseup");
  await page.getByRole("button", { name: "Ask about this" }).click();

  await send(page, "What does this mean?");
  await expect(chip).toBeHidden();
  const asked = page.locator(".msg.user");
  await expect(asked.locator(".selection-chip")).toHaveText("Rivers");
  await expect(asked.locator(".bubble")).toHaveText("What does this mean?");
  await expect(lastReply(page)).toContainText("You asked about this part of the lesson: “Rivers”");
  await page.reload();
  await hydrated(page);
  await expect(asked.locator(".selection-chip")).toHaveText("Rivers");
});
