// Text for XML 1.0 documents the report writers build by hand (JUnit).
#pragma once

#include <string>
#include <string_view>

#include "topoguard/common/result.h"

namespace topoguard {

// Text escaped for XML 1.0 element content or (`attribute`) a quoted attribute value: markup
// characters as entities, in attributes also line breaks and tabs as character references (a
// parser would normalise them to spaces), characters XML cannot carry (other controls, invalid
// UTF-8) as U+FFFD.
[[nodiscard]] std::string xml_escape(std::string_view text, bool attribute = true);

// A JUnit <testcase> (classname the error's file, name "input") holding an <error> for an input
// error, indented for a <testsuite>.
[[nodiscard]] std::string junit_error_case(const Error& error);

}  // namespace topoguard
