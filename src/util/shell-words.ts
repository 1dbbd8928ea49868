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
  return new CommandSplitter(line).split();
}

type Heredoc = { delimiter: string; stripTabs: boolean };

/** Reads a command line left to right, a word at a time; `#i` is where it is. */
class CommandSplitter {
  readonly #line: string;
  readonly #commands: SimpleCommand[] = [];
  #current: SimpleCommand = { words: [], redirections: [], next: "" };
  #i = 0;
  #word = "";
  #inWord = false;
  #pendingRedirect: string | undefined;
  #heredocs: Heredoc[] = [];

  constructor(line: string) {
    this.#line = line;
  }

  split(): SimpleCommand[] {
    while (this.#i < this.#line.length) this.#read(this.#line[this.#i] as string, this.#line[this.#i + 1]);
    this.#endCommand("");
    return this.#commands;
  }

  /** Reads what starts at the current character `c` (followed by `after`): a quote, an operator, a comment, ... */
  #read(c: string, after: string | undefined): void {
    if (c === "\\") this.#readEscape(after);
    else if (c === "'") this.#readSingleQuoted();
    else if (c === '"') this.#readDoubleQuoted();
    else if (c === "$" && after === "(") this.#readSubstitution();
    else if (c === "`") this.#readBackquoted();
    else if (c === "#" && !this.#inWord) this.#skipComment();
    else if (c === " " || c === "\t") this.#skipBlank();
    else if (c === "\n") this.#readNewline();
    else if (c === ">" || c === "<" || (c === "&" && after === ">")) this.#readRedirect(c);
    else if (c === "&" || c === "|" || c === ";") this.#readOperator(c);
    else if (c === ")" || (c === "(" && !this.#inWord)) this.#skipBlank();
    else this.#append(c);
  }

  /** Adds `text` to the word and moves past `length` characters of the line (default: the text's). */
  #append(text: string, length = text.length): void {
    this.#word += text;
    this.#inWord = true;
    this.#i += length;
  }

  /** `\x` is `x`; a backslash before a newline joins the lines. */
  #readEscape(after: string | undefined): void {
    if (after === "\n") this.#i += 2;
    else this.#append(after ?? "", 2);
  }

  #readSingleQuoted(): void {
    const end = this.#line.indexOf("'", this.#i + 1);
    const stop = end < 0 ? this.#line.length : end;
    this.#append(this.#line.slice(this.#i + 1, stop), stop + 1 - this.#i);
  }

  /** Inside double quotes a backslash escapes only `"`, `\\`, `$`, a backquote and a newline. */
  #readDoubleQuoted(): void {
    const line = this.#line;
    let i = this.#i + 1;
    let text = "";
    while (i < line.length && line[i] !== '"') {
      if (line[i] === "\\" && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1] as string)) i += 1;
      text += line[i];
      i += 1;
    }
    this.#append(text, i + 1 - this.#i);
  }

  /** A `$(...)` command substitution stays in its word, nested parentheses and all. */
  #readSubstitution(): void {
    this.#append(this.#line.slice(this.#i, matchingParen(this.#line, this.#i + 1) + 1));
  }

  /** A backquoted command stays in its word, backquotes included. */
  #readBackquoted(): void {
    const end = this.#line.indexOf("`", this.#i + 1);
    const stop = end < 0 ? this.#line.length : end + 1;
    this.#append(this.#line.slice(this.#i, stop));
  }

  #skipComment(): void {
    while (this.#i < this.#line.length && this.#line[this.#i] !== "\n") this.#i += 1;
  }

  /** A blank ends the word; so does a subshell bracket, which is dropped. */
  #skipBlank(): void {
    this.#endWord();
    this.#i += 1;
  }

  /** A newline ends the command; the bodies of heredocs opened on its line follow it. */
  #readNewline(): void {
    this.#endCommand("\n");
    this.#i += 1;
    if (this.#heredocs.length > 0) this.#i = skipHeredocs(this.#line, this.#i, this.#heredocs.splice(0));
  }

  /** A redirection operator, with the file descriptor before it (`2>`); its target is the next word. */
  #readRedirect(c: string): void {
    const fd =
      /^\d+$/.test(this.#word) && this.#inWord && this.#pendingRedirect === undefined ? this.#word : "";
    if (fd) {
      this.#word = "";
      this.#inWord = false;
    } else this.#endWord();
    const op = /^(?:&>>?|<<<|<<-|<<|<>|<&|>>|>&|>\||>|<)/.exec(this.#line.slice(this.#i))?.[0] ?? c;
    this.#i += op.length;
    // `2>&1`, `>&2`: the target follows the `&` directly.
    this.#pendingRedirect = fd + op;
  }

  #readOperator(c: string): void {
    const two = this.#line.slice(this.#i, this.#i + 2);
    const op = two === "&&" || two === "||" || two === ";;" || two === "|&" ? two : c;
    this.#endCommand(op);
    this.#i += op.length;
  }

  /** Ends the word: a redirection's target, or a word of the command (a leading `{`, `}` or `!` is dropped). */
  #endWord(): void {
    if (!this.#inWord) return;
    const word = this.#word;
    const redirect = this.#pendingRedirect;
    if (redirect !== undefined) {
      this.#current.redirections.push({ op: redirect, target: word });
      if (redirect.startsWith("<<") && redirect !== "<<<") {
        this.#heredocs.push({ delimiter: word, stripTabs: redirect === "<<-" });
      }
      this.#pendingRedirect = undefined;
    } else if (!(this.#current.words.length === 0 && (word === "{" || word === "}" || word === "!"))) {
      this.#current.words.push(word);
    }
    this.#word = "";
    this.#inWord = false;
  }

  /** Ends the command with the operator `op`; an empty command passes its operator on to the one before. */
  #endCommand(op: string): void {
    this.#endWord();
    const current = this.#current;
    if (current.words.length > 0 || current.redirections.length > 0) {
      current.next = op;
      this.#commands.push(current);
    } else if (this.#commands.length > 0 && op !== "\n") {
      const previous = this.#commands[this.#commands.length - 1];
      if (previous && previous.next === "\n") previous.next = op;
    }
    this.#current = { words: [], redirections: [], next: "" };
  }
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
function skipHeredocs(line: string, start: number, heredocs: Heredoc[]): number {
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
