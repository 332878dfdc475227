import { execFileSync } from "node:child_process";
import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { createLesson, hydrated, lastReply, send, signUp, uniqueEmail } from "./helpers";

/** Sets the school's monthly allowance on the School page (the account is its admin). */
async function setAllowance(page: Page, tokens: string): Promise<void> {
  await page.goto("/school");
  await page.getByLabel("Monthly allowance in tokens").fill(tokens);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Saved.")).toBeVisible();
}

/** Names the account an operator, as whoever runs the server does (`margin operators add`). */
function makeOperator(email: string): void {
  const bin = process.env.MARGIN_E2E_BIN;
  expect(bin, "make e2e sets MARGIN_E2E_BIN").toBeTruthy();
  execFileSync(bin!, ["operators", "add", email], { env: process.env });
}

test("the usage meter moves after a reply, and a spent allowance stops the input until credits come", async ({ page }) => {
  const email = uniqueEmail("budget");
  await signUp(page, email);
  // The first account of a school runs it: the School page is in the top bar.
  await expect(page.getByRole("link", { name: "School", exact: true })).toBeVisible();
  await setAllowance(page, "100,000");
  const lesson = await createLesson(page, "Verbs");
  await hydrated(page);
  const meter = page.locator(".usage-meter");
  await expect(meter).toHaveText("0 of 100,000 tokens used this month");

  await send(page, "test");
  await expect(lastReply(page)).toContainText("Hello");
  await expect(meter).not.toHaveText("0 of 100,000 tokens used this month");
  await expect(meter).toHaveText(/^[1-9][\d,]* of 100,000 tokens used this month$/);

  // An allowance below what was used: nothing more can be asked this month.
  await setAllowance(page, "1");
  await page.goto(lesson);
  await hydrated(page);
  const spent = page.locator(".budget-spent");
  await expect(spent).toContainText("Your school's AI allowance for this month is used up. It resets on 1 ");
  const box = page.getByRole("textbox", { name: "Message" });
  await expect(box).toBeDisabled();

  // The admin is sent to the School page, which says credits come from
  // whoever runs the server; an operator adds them there, and the input opens again.
  await spent.getByRole("link", { name: "Add credits" }).click();
  await expect(page).toHaveURL(/\/school#credits$/);
  await expect(page.getByText("Credits are added by whoever runs this Margin server.")).toBeVisible();
  await expect(page.getByLabel("Tokens to add")).toHaveCount(0);
  makeOperator(email);
  await page.reload();
  await page.getByLabel("Tokens to add").fill("50000");
  await page.getByRole("button", { name: "Add credits" }).click();
  await expect(page.getByText("Credits added.")).toBeVisible();
  await expect(page.locator(".school-credits")).toHaveText("50,000");
  await page.goto(lesson);
  await hydrated(page);
  await expect(box).toBeEnabled();
  await expect(meter).toContainText("50,000 credits left");
});

test("an admin invites a teacher with a link that works once", async ({ page, browser }) => {
  await signUp(page, uniqueEmail("head"));
  await page.goto("/school");
  await page.getByRole("button", { name: "Invite a teacher" }).click();
  const link = await page.getByLabel("Invitation link").inputValue();
  // The whole address, to paste into an email.
  expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/signup\?invite=[0-9a-f]+$/);
  await expect(page.getByRole("button", { name: "Revoke" })).toBeVisible();

  const other = await browser.newContext();
  const teacher = await other.newPage();
  const email = uniqueEmail("invited");
  await teacher.goto(link);
  await expect(teacher.getByText("You were invited to join a school on Margin.")).toBeVisible();
  await teacher.getByLabel("Email").fill(email);
  await teacher.getByLabel("Password").fill("correct horse battery");
  await teacher.getByRole("button", { name: "Sign up" }).click();
  await expect(teacher.getByRole("heading", { name: "Your lessons" })).toBeVisible();
  // A teacher is not the school's admin.
  await expect(teacher.getByRole("link", { name: "School", exact: true })).toHaveCount(0);
  await teacher.goto("/school");
  await expect(teacher.getByRole("alert")).toHaveText("Only your school's admin can do that.");
  await other.close();

  await page.goto("/school");
  await expect(page.getByRole("cell", { name: email })).toBeVisible();
  await expect(page.getByRole("button", { name: "Revoke" })).toHaveCount(0);
});
