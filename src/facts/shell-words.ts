/** A redirection of a simple command: `>`, `>>`, `2>`, `&>`, `<`, `<<` (heredoc), ... and its target word. */
export interface Redirection {
  op: string;
  target: string;
}

/** One simple command of a command line: its words (quotes removed) and redirections. */
export interface SimpleCommand {
  words: string[];
  redirections: Redirection[];
  /** The operator that joins it to the next command: `&&`, `||`, `;`, `|`, `&`, newline, or "" at the end. */
  next: string;
}

/**
 * Splits a bash command line into simple commands, the way a reader would: quotes ('...', "...", \x) are
 * removed from words, `$(...)` and backquotes stay inside their word, `#` comments are dropped, heredoc
 * bodies are skipped, and `&&`, `||`, `;`, `|`, `&` and newlines separate commands. Subshell and group
 * brackets (`(`, `{`, `}`, `)`) are dropped. It never throws: an unterminated quote ends at the end.
 */
export function simpleCommands(line: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], redirections: [], next: "" };
  let word = "";
  let inWord = false;
  let pendingRedirect: string | undefined;
  const heredocs: Array<{ delimiter: string; stripTabs: boolean }> = [];

  const endWord = () => {
    if (!inWord) return;
    if (pendingRedirect !== undefined) {
      current.redirections.push({ op: pendingRedirect, target: word });
      if (pendingRedirect.startsWith("<<") && pendingRedirect !== "<<<") {
        heredocs.push({ delimiter: word, stripTabs: pendingRedirect === "<<-" });
      }
      pendingRedirect = undefined;
    } else if (!(current.words.length === 0 && (word === "{" || word === "}" || word === "!"))) {
      current.words.push(word);
    }
    word = "";
    inWord = false;
  };
  const endCommand = (op: string) => {
    endWord();
    if (current.words.length > 0 || current.redirections.length > 0) {
      current.next = op;
      commands.push(current);
    } else if (commands.length > 0 && op !== "\n") {
      const previous = commands[commands.length - 1];
      if (previous && previous.next === "\n") previous.next = op;
    }
    current = { words: [], redirections: [], next: "" };
  };

  let i = 0;
  while (i < line.length) {
    const c = line[i] as string;
    if (c === "\\") {
      if (line[i + 1] === "\n") {
        i += 2;
        continue;
      }
      word += line[i + 1] ?? "";
      inWord = true;
      i += 2;
      continue;
    }
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word += line.slice(i + 1, end < 0 ? line.length : end);
      inWord = true;
      i = end < 0 ? line.length : end + 1;
      continue;
    }
    if (c === '"') {
      i += 1;
      while (i < line.length && line[i] !== '"') {
        if (line[i] === "\\" && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1] as string)) i += 1;
        word += line[i];
        i += 1;
      }
      inWord = true;
      i += 1;
      continue;
    }
    if (c === "$" && line[i + 1] === "(") {
      const end = matchingParen(line, i + 1);
      word += line.slice(i, end + 1);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === "`") {
      const end = line.indexOf("`", i + 1);
      word += line.slice(i, end < 0 ? line.length : end + 1);
      inWord = true;
      i = end < 0 ? line.length : end + 1;
      continue;
    }
    if (c === "#" && !inWord) {
      while (i < line.length && line[i] !== "\n") i += 1;
      continue;
    }
    if (c === " " || c === "\t") {
      endWord();
      i += 1;
      continue;
    }
    if (c === "\n") {
      endCommand("\n");
      i += 1;
      if (heredocs.length > 0) i = skipHeredocs(line, i, heredocs.splice(0));
      continue;
    }
    if (c === ">" || c === "<" || (c === "&" && line[i + 1] === ">")) {
      const fd = /^\d+$/.test(word) && inWord && pendingRedirect === undefined ? word : "";
      if (fd) {
        word = "";
        inWord = false;
      } else endWord();
      const op = /^(?:&>>?|<<<|<<-|<<|<>|<&|>>|>&|>\||>|<)/.exec(line.slice(i))?.[0] ?? c;
      i += op.length;
      pendingRedirect = fd + op;
      // `2>&1`, `>&2`: the target follows the `&` directly.
      continue;
    }
    if (c === "&" || c === "|" || c === ";") {
      const two = line.slice(i, i + 2);
      const op = two === "&&" || two === "||" || two === ";;" || two === "|&" ? two : c;
      endCommand(op);
      i += op.length;
      continue;
    }
    if (c === ")" || (c === "(" && !inWord)) {
      endWord();
      i += 1;
      continue;
    }
    word += c;
    inWord = true;
    i += 1;
  }
  endCommand("");
  return commands;
}

/** The index of the `)` closing the `(` at `open`, counting nested parentheses and skipping quotes. */
function matchingParen(line: string, open: number): number {
  let depth = 0;
  for (let i = open; i < line.length; i++) {
    const c = line[i];
    if (c === "\\") i += 1;
    else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      i = end < 0 ? line.length : end;
    } else if (c === "(") depth += 1;
    else if (c === ")") {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return line.length - 1;
}

/** Skips the bodies of the heredocs opened on the line just ended; returns where the next command starts. */
function skipHeredocs(
  line: string,
  start: number,
  heredocs: Array<{ delimiter: string; stripTabs: boolean }>,
): number {
  let i = start;
  for (const { delimiter, stripTabs } of heredocs) {
    while (i < line.length) {
      const end = line.indexOf("\n", i);
      const text = line.slice(i, end < 0 ? line.length : end);
      i = end < 0 ? line.length : end + 1;
      if ((stripTabs ? text.replace(/^\t+/, "") : text) === delimiter) break;
    }
  }
  return i;
}
