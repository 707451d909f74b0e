/**
 * Parses JSON that may carry trailing commas (`{"a": 1,}`), as some of Confluent's published
 * test files do (its Jackson reader accepts them). Commas are removed only outside strings, so
 * the data itself is read unchanged.
 */
export function parseLenientJson(text: string): unknown {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i] ?? '';
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    if (ch === ',') {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') continue;
    }
    out += ch;
  }
  return JSON.parse(out);
}
