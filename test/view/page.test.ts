import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { recordEvalInRunJson } from "../../src/eval/verdict-record.js";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli } from "../helpers/cli.js";
import { artifactsDir, describeBrowser, launchBrowser, openFile } from "./browser.js";
import {
  plantedMiniTrajectory,
  recordDemo,
  recordScriptedBatch,
  SCRIPT_OUTPUT,
  writeEvalReport,
} from "./scenarios.js";

const SECRET = "sk-viewtest-0123456789abcdef";
/** A recorded `swerun run` (test/helpers/report-scenarios.ts): a retry, reasoning, a cut-off reply, a timeout. */
const FULL = join(packageRoot(), "test", "fixtures", "report", "swerun-full.traj.json");

describeBrowser("swerun view pages in headless chromium", () => {
  let root: string;
  let demo: string;
  let demoB: string;
  let scripted: string;
  let mini: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  const newPage = () => browser.browser.newPage();

  const view = async (args: string[], env: Record<string, string> = {}) => {
    const result = await runCli(["view", ...args], { cwd: root, env });
    expect(result.stderr).toMatch(/^wrote /);
    expect(result.code).toBe(0);
    return result;
  };
  const ids = (page: Page) =>
    page.$$eval("#instances tbody tr", (rows) => rows.map((row) => row.getAttribute("data-id")));

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "swerun-view-"));
    [demo, demoB, scripted] = await Promise.all([
      recordDemo(root, "demo"),
      recordDemo(root, "demo-b"),
      recordScriptedBatch(root),
    ]);
    writeEvalReport(demo, "swerun-demo__calc-1", true);
    writeEvalReport(demo, "swerun-demo__greet-2", false);
    // What --eval records beside the verdict: the instance's language and the parser of its tests.
    recordEvalInRunJson(join(demo, "run.json"), {
      run_id: "demo",
      verdicts: {
        "swerun-demo__calc-1": {
          resolved: true,
          status: "resolved",
          language: "Go",
          log_parser: "parse_log_gotest",
        },
      },
    });
    writeEvalReport(demoB, "swerun-demo__calc-1", false);
    writeEvalReport(demoB, "swerun-demo__greet-2", true);
    // count-3's verdict as run.json records an empty patch's (the page names the reason).
    recordEvalInRunJson(join(demo, "run.json"), {
      run_id: "demo",
      verdicts: { "swerun-demo__count-3": { resolved: false, status: "empty_patch" } },
    });
    mini = plantedMiniTrajectory(root, SECRET);
    await view([demo]);
    await view([scripted]);
    await view([demo, demoB, "-o", join(root, "cmp.html")]);
    await view([mini], { OPENAI_API_KEY: SECRET });
    await view([FULL, "-o", join(root, "full.html")]);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("shows the demo run's settings, totals and counts per exit status, and opens an instance with its diff and verdict", async () => {
    const { page, errors } = await openFile(newPage, join(demo, "index.html"));
    expect(await page.textContent(".run-info")).toContain("deterministic/demo");
    expect(await page.textContent('.chip[data-status="Submitted"] .count')).toBe("3");
    expect(await page.textContent("#shown-count")).toBe("Showing all 3 instances");
    expect(await page.textContent(".run-info")).toContain("1 of 3 evaluated");
    expect(await page.textContent('tr[data-id="swerun-demo__count-3"] .verdict-no')).toBe("✗ empty patch");
    expect(await page.textContent('tr[data-id="swerun-demo__greet-2"] .verdict-no')).toBe("✗ unresolved");
    await page.screenshot({ path: join(artifactsDir(), "view-overview.png") });

    await page.click('a[href="#swerun-demo__calc-1"]');
    await page.waitForSelector('#instance[data-loaded="swerun-demo__calc-1"]');
    expect(await page.textContent(".problem pre")).toContain("add 2 3");
    expect(await page.$$eval("#instance .step[data-step]:not(.exit)", (s) => s.length)).toBe(4);
    expect(await page.$$eval(".diff .line.add", (lines) => lines.map((l) => l.textContent))).toEqual([
      "+  echo $(($1 + $2))\n",
    ]);
    expect(await page.textContent(".diff-name")).toBe("calc.sh");
    expect(await page.textContent(".verdict")).toContain("✓ resolved");
    expect(await page.textContent(".verdict .lang")).toBe("Go · parse_log_gotest");
    expect(await page.textContent('.tests tr[data-kind="FAIL_TO_PASS"] .pass')).toContain("test.sh::add_2_3");
    await page.screenshot({ path: join(artifactsDir(), "view-instance.png"), fullPage: true });

    await page.goto(`${page.url().split("#")[0]}#swerun-demo__greet-2`);
    await page.waitForSelector('#instance[data-loaded="swerun-demo__greet-2"]');
    expect(await page.textContent('.tests tr[data-kind="FAIL_TO_PASS"] .fail')).toContain("test.sh::add_2_3");
    expect(await page.textContent(".verdict .log pre")).toContain("FAILED: gave -1, expected 5");
    expect(errors).toEqual([]);
  });

  it("sorts and filters the table, and marks format errors, timeouts and limits", async () => {
    const { page, errors } = await openFile(newPage, join(scripted, "index.html"));
    expect(await page.textContent('.chip[data-status="Submitted"] .count')).toBe("2");
    expect(await page.textContent('.chip[data-status="LimitsExceeded"] .count')).toBe("1");
    expect(await ids(page)).toEqual(["view__fix-1", "view__limit-3", "view__mixed-2"]);

    await page.click('button.sort[data-key="steps"]');
    // limit-3 and mixed-2 both take 5 steps: ties keep id order.
    expect(await ids(page)).toEqual(["view__limit-3", "view__mixed-2", "view__fix-1"]);
    await page.click('button.sort[data-key="steps"]');
    expect(await ids(page)).toEqual(["view__fix-1", "view__limit-3", "view__mixed-2"]);

    await page.click('.chip[data-status="LimitsExceeded"]');
    expect(await ids(page)).toEqual(["view__limit-3"]);
    expect(await page.textContent("#shown-count")).toBe("Showing 1 of 3 instances");
    await page.click('.chip[data-status="all"]');
    await page.fill("#filter-text", "MIXED");
    expect(await ids(page)).toEqual(["view__mixed-2"]);
    expect(await page.textContent('tr[data-id="view__mixed-2"] td:last-child')).toBe(
      "1 format error, 1 timeout",
    );

    await page.click('tr[data-id="view__mixed-2"] td:nth-child(4)');
    await page.waitForSelector('#instance[data-loaded="view__mixed-2"]');
    expect(
      await page.$$eval("#instance .step.has-error", (s) => s.map((n) => n.getAttribute("data-step"))),
    ).toEqual(["1"]);
    expect(await page.textContent("#step-2 header")).toContain("timeout");
    expect(await page.textContent("#step-2 .call-meta")).toContain("exit code -1");
    expect(await page.$$eval(".chart polyline", (lines) => lines.length)).toBe(2);

    await page.goto(`${page.url().split("#")[0]}#view__limit-3`);
    await page.waitForSelector('#instance[data-loaded="view__limit-3"]');
    expect(await page.textContent(".step.exit")).toContain("LimitsExceeded");
    expect(await page.textContent(".step.exit")).toContain("step limit");
    expect(errors).toEqual([]);
  });

  it("shows a command's <script> output as text and never runs it", async () => {
    const { page, errors } = await openFile(newPage, join(scripted, "index.html"), "#view__mixed-2");
    await page.waitForSelector('#instance[data-loaded="view__mixed-2"]');
    const output = await page.textContent("#step-3 .output-text");
    expect(output).toContain(SCRIPT_OUTPUT);
    expect(await page.$$eval("#instance img, #instance script", (nodes) => nodes.length)).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    // The overview data stays inert too: the only <script> elements are the page's own.
    const html = readFileSync(join(scripted, "index.html"), "utf8");
    expect(html).not.toContain("window.__pwned");
    expect(errors).toEqual([]);
  });

  it("searches commands and outputs, lists hits by instance and step, and opens a hit", async () => {
    const { page } = await openFile(newPage, join(demo, "index.html"));
    await page.press("body", "/");
    expect(await page.evaluate("document.activeElement.id")).toBe("search");
    await page.keyboard.type("gave -1");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#search-status:not(:text-matches('^Searching'))");
    expect(await page.textContent("#search-status")).toMatch(/^1 hit in 1 instance/);
    expect(await page.$$eval(".hit-group", (g) => g.map((n) => n.getAttribute("data-id")))).toEqual([
      "swerun-demo__calc-1",
    ]);

    await page.check("#search-regex");
    await page.fill("#search", "^bash test\\.sh$");
    await page.press("#search", "Enter");
    await page.waitForSelector("#search-status:not(:text-matches('^Searching'))");
    expect(await page.textContent("#search-status")).toMatch(/^3 hits in 3 instances/);
    await page.click('.hit-group[data-id="swerun-demo__greet-2"] a.hit');
    await page.waitForSelector('#instance[data-loaded="swerun-demo__greet-2"]');
    await page.waitForSelector("#step-2.current");

    await page.fill("#search", "([");
    await page.press("#search", "Enter");
    expect(await page.textContent("#search-results")).toContain("Not a valid regular expression");
  });

  it("moves between rows, steps and instances with the keyboard", async () => {
    const { page } = await openFile(newPage, join(demo, "index.html"));
    await page.keyboard.press("j");
    expect(await page.getAttribute("#instances tbody tr.selected", "data-id")).toBe("swerun-demo__count-3");
    await page.keyboard.press("Enter");
    await page.waitForSelector('#instance[data-loaded="swerun-demo__count-3"]');
    await page.keyboard.press("j");
    await page.waitForSelector("#step-1.current");
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("k");
    await page.waitForSelector("#step-2.current");
    await page.keyboard.press("n");
    await page.waitForSelector('#instance[data-loaded="swerun-demo__greet-2"]');
    await page.keyboard.press("p");
    await page.keyboard.press("p");
    await page.waitForSelector('#instance[data-loaded="swerun-demo__calc-1"]');
    await page.keyboard.press("Escape");
    await page.waitForSelector("#overview:not([hidden])");
    expect(await page.isHidden("#instance-view")).toBe(true);
  });

  it("shows two runs side by side, flips first, and opens both trajectories of an instance", async () => {
    const { page, errors } = await openFile(newPage, join(root, "cmp.html"));
    const rows = await ids(page);
    expect(rows.slice(0, 2).sort()).toEqual(["swerun-demo__calc-1", "swerun-demo__greet-2"]);
    expect(rows[2]).toBe("swerun-demo__count-3");
    expect(await page.textContent('tr[data-id="swerun-demo__calc-1"] .flip-lost')).toContain("lost");
    expect(await page.textContent('tr[data-id="swerun-demo__greet-2"] .flip-gained')).toContain("gained");
    await page.click('.chip[data-status="flips"]');
    expect((await ids(page)).length).toBe(2);
    await page.click('a[href="#swerun-demo__greet-2"]');
    await page.waitForSelector('#instance[data-loaded="swerun-demo__greet-2"]');
    expect(await page.$$eval("#instance .column", (columns) => columns.length)).toBe(2);
    expect(await page.textContent('#instance .column[data-run="0"] .verdict')).toContain("unresolved");
    expect(await page.textContent('#instance .column[data-run="1"] .verdict')).toContain("✓ resolved");
    expect(errors).toEqual([]);
  });

  it("opens a single mini-swe-agent trajectory at its steps, with a planted secret redacted", async () => {
    const file = join(root, "mini.html");
    const html = readFileSync(file, "utf8");
    expect(html).not.toContain(SECRET);
    const { page, errors } = await openFile(newPage, file);
    await page.waitForSelector("#instance[data-loaded]");
    expect(await page.textContent("#step-1 .output-text")).toContain("OPENAI_API_KEY=[REDACTED]");
    expect(await page.$$eval("#instance .step.has-error", (s) => s.length)).toBe(1);
    expect(await page.textContent(".step.exit")).toContain("Submitted");
    expect(errors).toEqual([]);
  });

  it("marks retries, collapses reasoning, and marks a reply cut off at the token limit", async () => {
    const { page, errors } = await openFile(newPage, join(root, "full.html"));
    await page.waitForSelector("#instance[data-loaded]");
    expect(await page.textContent("#step-1 header")).toContain("retried 1×");
    expect(await page.getAttribute("#step-1 details.reasoning", "open")).toBeNull();
    expect(await page.isVisible("#step-1 details.reasoning pre")).toBe(false);
    await page.click("#step-1 details.reasoning summary");
    expect(await page.textContent("#step-1 details.reasoning pre")).toContain("so I read it before changing");
    expect(await page.textContent("#step-2 header")).toContain("cut off");
    expect(await page.textContent("#step-2 header")).toContain("format error");
    expect(await page.textContent("#step-3 header")).toContain("timeout");
    expect(errors).toEqual([]);
  });
});
