# cmake -DINPUT=<yaml> -DOUTPUT=<cpp> -P embed_policy.cmake
# Writes a C++ source defining topoguard::policy::detail::builtin_policy_source() with the exact
# bytes of INPUT, written as \x escapes so no delimiter, encoding or line ending can alter them.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR byte_count "${hex_length} / 2")
set(body "")
set(offset 0)
while(offset LESS hex_length)
  string(SUBSTRING "${hex}" ${offset} 48 chunk)  # 24 bytes per source line
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" chunk "${chunk}")
  string(APPEND body "\n    \"${chunk}\"")
  math(EXPR offset "${offset} + 48")
endwhile()
if(body STREQUAL "")
  set(body "\n    \"\"")
endif()
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by embed_policy.cmake. Do not edit.
#include \"builtin_policy.h\"

namespace topoguard::policy::detail {

namespace {
constexpr char kText[] =${body};
}  // namespace

std::string_view builtin_policy_source() { return std::string_view(kText, ${byte_count}); }

}  // namespace topoguard::policy::detail
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
