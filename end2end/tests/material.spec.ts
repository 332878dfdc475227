import { expect, test } from "./csp";
import { createLesson, hydrated, lastReply, send, signUp, uniqueEmail } from "./helpers";

// "Material" on the lesson page: files added with a plain form, listed,
// refused with a reason, removed; and the assistant reading one.

test("material is added, listed, refused with a reason, read by the assistant and removed", async ({ page }) => {
  await signUp(page, uniqueEmail("material"));
  await createLesson(page, "Rivers");
  const material = page.locator("#material");
  await expect(material.getByText("No material yet.")).toBeVisible();
  // This teacher asks for themselves: no automatic reply to new material
  // (reactions.spec.ts has those). The switch is kept.
  await material.getByLabel("Let the assistant react on its own").uncheck();
  await material.getByRole("button", { name: "Update setting" }).click();
  await expect(material.getByLabel("Let the assistant react on its own")).not.toBeChecked();

  await material.getByLabel(/Files/).setInputFiles([
    { name: "Notes.txt", mimeType: "text/plain", buffer: Buffer.from("Rivers begin in the hills.\nThey flow to the sea.") },
    { name: "Page.html", mimeType: "text/html", buffer: Buffer.from("<h1>Deltas</h1><p>Deltas form where rivers meet the sea.</p>") },
  ]);
  await material.getByRole("button", { name: "Add material" }).click();
  const sources = material.getByRole("list", { name: "Sources" });
  await expect(sources.getByRole("listitem")).toHaveCount(2);
  await expect(sources.getByRole("listitem").first()).toContainText("Notes.txt");
  await expect(sources.getByRole("listitem").first()).toContainText("Rivers begin in the hills. They flow to the sea.");
  await expect(sources.getByRole("listitem").nth(1)).toContainText("Deltas Deltas form where rivers meet the sea.");

  // A file Margin cannot read: the reason, and nothing added.
  await material.getByLabel(/Files/).setInputFiles([{ name: "slides.pptx", mimeType: "application/octet-stream", buffer: Buffer.from("PK") }]);
  await material.getByRole("button", { name: "Add material" }).click();
  await expect(material.getByRole("alert")).toContainText("“slides.pptx” is not a kind of file Margin can read");
  await expect(sources.getByRole("listitem")).toHaveCount(2);

  // The assistant reads the first one.
  await hydrated(page);
  await send(page, "Make a quiz from my material");
  await expect(lastReply(page)).toContainText("From your material: Rivers begin in the hills.");
  await lastReply(page).getByRole("button", { name: "Done (1 step)" }).click();
  await expect(lastReply(page).locator(".step")).toContainText("Reading your material");

  await sources.getByRole("button", { name: "Remove Notes.txt" }).click();
  await expect(sources.getByRole("listitem")).toHaveCount(1);
  await expect(sources).not.toContainText("Notes.txt");
});
