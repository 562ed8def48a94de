// Text from input made safe for human-readable output (terminals, CI logs): whatever a name, a
// message or a path holds, it can neither end the line it is printed on nor drive the terminal.
// Every writer of text output passes input through here; JSON, SARIF and JUnit escape on their
// own.
#pragma once

#include <string>
#include <string_view>

namespace topoguard {

// `text` with every character that could break or hide a line escaped: \n, \r and \t as such,
// other C0 controls and DEL as \xNN (\x1b), C1 controls and the Unicode line separators and bidi
// overrides as \uNNNN (\u009b, \u202e), each byte of invalid UTF-8 as \xNN. Printable text,
// non-ASCII included, is left as it is (so is `\`: names cannot hold one, and messages read
// better unchanged).
[[nodiscard]] std::string printable(std::string_view text);

// Each line of `text` printable, the line feeds between them kept: for multi-line text built
// from input (a diff), where each line is still one line.
[[nodiscard]] std::string printable_lines(std::string_view text);

}  // namespace topoguard
