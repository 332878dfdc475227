import { expect, Page } from "@playwright/test";

/** A fresh address per call, so tests never collide with accounts from another test. */
export function uniqueEmail(name: string): string {
  return `${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@school.test`;
}

export const PASSWORD = "correct horse battery";

/** Waits until the WASM bundle has taken over the page (set by `App`). */
export async function hydrated(page: Page): Promise<void> {
  await page.locator("body[data-hydrated=true]").waitFor();
}

export async function signUp(page: Page, email: string): Promise<void> {
  await page.goto("/signup");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page.getByRole("heading", { name: "Your lessons" })).toBeVisible();
}

export async function signIn(page: Page, email: string): Promise<void> {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Creates a lesson from the lessons page and returns its URL. */
export async function createLesson(page: Page, title: string): Promise<string> {
  await page.goto("/");
  await hydrated(page);
  await page.getByRole("button", { name: "New lesson" }).click();
  await page.getByLabel("Title").fill(title);
  await page.getByRole("button", { name: "Create lesson" }).click();
  await expect(page).toHaveURL(/\/lessons\/[0-9a-f]{32}$/);
  await expect(page.getByRole("heading", { name: title, level: 1 })).toBeVisible();
  return page.url();
}
