import { describe, expect, it } from "vitest";
import { htmlAsText } from "#src/dev/cli/email/htmlAsText.ts";

describe("htmlAsText (platform email show)", () => {
  it.each([
    ["paragraphs as lines", "<p>Hello</p><p>World</p>", "Hello\nWorld"],
    ["line breaks", "a<br>b<br/>c", "a\nb\nc"],
    ["links with their address", '<a href="https://x.test/a">Open</a>', "Open (https://x.test/a)"],
    ["a link whose text is its address once", "<a href='https://x.test'>https://x.test</a>", "https://x.test"],
    ["list items", "<ul><li>one</li><li>two</li></ul>", "- one\n- two"],
    ["entities", "&lt;b&gt; &amp; &quot;q&quot; &#39;s&#x27; &nbsp;x &bogus;", "<b> & \"q\" 's' x &bogus;"],
    ["no script, style or title", "<title>T</title><style>p{}</style><script>alert(1)</script><p>ok</p>", "ok"],
    ["no comments", "a<!-- hidden -->b", "ab"],
    ["no terminal escapes, even encoded", "<p>\u001b[31mred&#27;[0m</p>", "[31mred[0m"],
    ["collapsed blank lines and spaces", "<div>a</div>\n\n\n\n<div>  b   c </div>", "a\n\nb c"],
  ])("renders %s", (_name, html, text) => {
    expect(htmlAsText(html)).toBe(text);
  });
});
