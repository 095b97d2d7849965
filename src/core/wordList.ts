const alternatives = new Intl.ListFormat("en-GB", { style: "long", type: "disjunction" });
const all = new Intl.ListFormat("en-GB", { style: "long", type: "conjunction" });

/** Choices as a sentence offers them: "a", "a or b", "a, b or c". */
export function orList(words: readonly string[]): string {
  return alternatives.format(words);
}

/** Several things as a sentence names them: "a", "a and b", "a, b and c". */
export function andList(words: readonly string[]): string {
  return all.format(words);
}
