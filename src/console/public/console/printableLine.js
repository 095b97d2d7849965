// @ts-check

/**
 * A log line as a terminal or the console may show it: every control character but newline and tab
 * written as `\xNN`, so a logged escape sequence (one that retitles the window or clears the screen of
 * whoever runs `platform logs`) is read, not obeyed. `platform logs --raw` prints the bytes as logged.
 * @param {string} text
 */
export function printableLine(text) {
  return text.replace(
    // C0 controls but \t and \n, DEL, and C1 controls (ESC's 8-bit forms).
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (control) => `\\x${control.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}
