import { expect, test } from "./csp";
import { createLesson, hydrated, signUp, uniqueEmail } from "./helpers";

// The sidebar's message box and Send are fully in view at common laptop,
// tablet and phone sizes (on a phone, once the sidebar is scrolled to), and
// an empty message takes no room.
for (const [width, height] of [[1280, 800], [1024, 768], [390, 844]]) {
  test(`the message box is in view at ${width}×${height}`, async ({ page }) => {
    await page.setViewportSize({ width, height });
    await signUp(page, uniqueEmail("fit"));
    await createLesson(page, "Fit");
    await hydrated(page);
    const box = page.getByRole("textbox", { name: "Message" });
    const send = page.getByRole("button", { name: "Send" });
    if (width <= 800) await box.scrollIntoViewIfNeeded();
    for (const el of [box, send]) {
      const r = await el.boundingBox();
      expect(r, "drawn").not.toBeNull();
      expect(r!.y, "top in view").toBeGreaterThanOrEqual(0);
      expect(r!.y + r!.height, "bottom in view").toBeLessThanOrEqual(height);
      expect(r!.x + r!.width, "right edge in view").toBeLessThanOrEqual(width);
    }
    // No empty error message drawn anywhere on the page.
    const empty = await page.locator(".form-error").evaluateAll((els) => els.filter((e) => (e.textContent ?? "").trim() === "" && e.getBoundingClientRect().height > 0).length);
    expect(empty).toBe(0);
  });
}
