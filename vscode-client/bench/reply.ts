/** A long assistant reply as a model streams it: markdown with paragraphs, lists and code, in small deltas. */

const PARAGRAPH =
  "The session tree keeps every branch, so an edit never loses the old answer; the chat shows " +
  "the current branch only, and **Branch from here** moves the leaf without writing anything. " +
  "Use `pi/getBranch` with `limit` to draw the end of a long branch first.";

const CODE = [
  "```ts",
  "export function foldChains(nodes: Node[]): Segment[] {",
  "  const segments: Segment[] = [];",
  "  for (const node of nodes) {",
  "    if (node.children.length === 1) continue; // still inside a chain",
  '    segments.push({ id: node.id, length: node.depth + 1, label: "chain" });',
  "  }",
  "  return segments;",
  "}",
  "```",
].join("\n");

const LIST = ["- read the file", "- change `foo()` to take a `Path`", "- run the tests: `pytest -q -x`", "- commit"].join("\n");

/** About `bytes` of reply text, made of the blocks a coding answer has. */
export function replyText(bytes: number): string {
  const blocks: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const block = i % 5 === 2 ? CODE : i % 5 === 4 ? LIST : i % 7 === 0 ? `## Step ${i}\n\n${PARAGRAPH}` : PARAGRAPH;
    blocks.push(block);
    size += block.length + 2;
  }
  return blocks.join("\n\n").slice(0, bytes);
}

/** Deltas of about `size` characters (the model's stream sends a few tokens per event). */
export function deltas(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += size) parts.push(text.slice(at, at + size));
  return parts;
}
