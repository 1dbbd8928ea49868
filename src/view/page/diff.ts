// An instance's submission, shown as a diff.
import { h } from "./dom.js";

/** A patch, file by file, each line marked as added, removed, context or header. */
export function renderDiff(text: string): HTMLElement {
  const wrap = h("div", { class: "diff" });
  let pre: HTMLElement | null = null;
  const start = (name: string): HTMLElement => {
    const made = h("pre");
    wrap.append(h("div", { class: "diff-file" }, h("div", { class: "diff-name" }, name), made));
    return made;
  };
  for (const line of text.replace(/\n$/, "").split("\n")) {
    const git = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (git) {
      pre = start(git[2] ?? "");
      continue;
    }
    pre ??= start("patch");
    let cls = "ctx";
    if (/^(\+\+\+|---|index |new file|deleted file|similarity|rename |old mode|new mode)/.test(line))
      cls = "meta";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    pre.append(h("span", { class: `line ${cls}` }, `${line}\n`));
  }
  return wrap;
}
