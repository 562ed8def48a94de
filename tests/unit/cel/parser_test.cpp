#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/cel/cel.h"

namespace topoguard::cel {
namespace {

// Renders a tree back as fully parenthesised text, so a test states the structure it expects.
std::string render(const Expr& expr);

std::string render_literal(const Literal& literal) {
  return std::visit(
      [](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, NullLiteral>) {
          return "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          return std::to_string(value) + "u";
        } else if constexpr (std::is_same_v<T, double>) {
          return "double(" + std::to_string(value) + ")";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + value + "\"";
        } else if constexpr (std::is_same_v<T, Bytes>) {
          std::string text = "b\"";
          for (char c : value.data) {
            text += std::to_string(static_cast<unsigned char>(c)) + ",";
          }
          return text + "\"";
        } else {
          return std::to_string(value);
        }
      },
      literal);
}

std::string render(const Expr& expr) {
  return std::visit(
      [](const auto& node) -> std::string {
        using T = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<T, Literal>) {
          return render_literal(node);
        } else if constexpr (std::is_same_v<T, Ident>) {
          return node.name;
        } else if constexpr (std::is_same_v<T, Select>) {
          return (node.test_only ? "has(" : "(") + render(*node.operand) + "." + node.field + ")";
        } else if constexpr (std::is_same_v<T, Call>) {
          std::string text = node.function + "(";
          if (node.target) {
            text += render(*node.target) + ";";
          }
          for (std::size_t i = 0; i < node.args.size(); ++i) {
            text += (i > 0 ? "," : "") + render(*node.args[i]);
          }
          return text + ")";
        } else if constexpr (std::is_same_v<T, CreateList>) {
          std::string text = "[";
          for (const auto& element : node.elements) {
            text += render(*element) + ",";
          }
          return text + "]";
        } else if constexpr (std::is_same_v<T, CreateMap>) {
          std::string text = "{";
          for (const auto& entry : node.entries) {
            text += render(*entry.key) + ":" + render(*entry.value) + ",";
          }
          return text + "}";
        } else if constexpr (std::is_same_v<T, CreateStruct>) {
          std::string text = node.message_name + "{";
          for (const auto& field : node.fields) {
            text += field.name + ":" + render(*field.value) + ",";
          }
          return text + "}";
        } else {
          static constexpr const char* kNames[] = {"all", "exists", "exists_one", "map", "filter"};
          std::string text = std::string(kNames[static_cast<int>(node.kind)]) + "(" +
                             render(*node.range) + ";" + node.variable;
          if (node.filter) {
            text += "," + render(*node.filter);
          }
          if (node.transform) {
            text += "," + render(*node.transform);
          }
          return text + ")";
        }
      },
      expr.node);
}

struct ParseCase {
  std::string_view note;
  std::string expression;
  std::string tree;
};

class ParseTest : public ::testing::TestWithParam<ParseCase> {};

// Each expression parses into the tree CEL's grammar gives it.
TEST_P(ParseTest, BuildsTheTree) {
  const auto program = compile(GetParam().expression);
  ASSERT_TRUE(program) << program.error().to_string();
  EXPECT_EQ(render(program->root()), GetParam().tree);
}

INSTANTIATE_TEST_SUITE_P(
    Cel, ParseTest,
    ::testing::Values(
        ParseCase{"int", "42", "42"},
        ParseCase{"negative_int_min", "-9223372036854775808", "-9223372036854775808"},
        ParseCase{"hex_int", "0x1F", "31"},
        ParseCase{"uint", "42u", "42u"},
        ParseCase{"hex_uint", "0xFFU", "255u"},
        ParseCase{"double_forms", "[1.5, .5, 1e3, 2E-2]",
                  "[double(1.500000),double(0.500000),double(1000.000000),double(0.020000),]"},
        ParseCase{"strings", R"(['a', "b", '''c'd''', """e"f"""])", R"(["a","b","c'd","e"f",])"},
        ParseCase{"escapes", R"("\x41\101\u00e9\n\"")", "\"AA\xc3\xa9\n\"\""},
        ParseCase{"raw_string", R"(r'\n')", R"("\n")"},
        ParseCase{"bytes", R"(b'\xff\101')", "b\"255,65,\""},
        ParseCase{"raw_bytes", R"(rb'\x')", "b\"92,120,\""},
        ParseCase{"null_true_false", "[null, true, false]", "[null,true,false,]"},
        ParseCase{"precedence_mul_add", "1 + 2 * 3", "_+_(1,_*_(2,3))"},
        ParseCase{"precedence_relation_logic", "a < b && c || !d",
                  "_||_(_&&_(_<_(a,b),c),!_(d))"},
        ParseCase{"left_associative", "1 - 2 - 3", "_-_(_-_(1,2),3)"},
        ParseCase{"in_operator", "x in [1, 2]", "@in(x,[1,2,])"},
        ParseCase{"ternary_right_associative", "a ? b : c ? d : e", "_?_:_(a,b,_?_:_(c,d,e))"},
        ParseCase{"double_negation_cancels", "!!a", "a"},
        ParseCase{"negate_member", "-a.b", "-_((a.b))"},
        ParseCase{"not_negative_literal", "!-1", "!_(-1)"},
        ParseCase{"member_index_call", R"(device.attributes["dra.net"].numa.foo(1))",
                  R"(foo((_[_]((device.attributes),"dra.net").numa);1))"},
        ParseCase{"global_call", "size(x)", "size(x)"},
        ParseCase{"reserved_word_as_field_and_method", "a.if.while()", "while((a.if);)"},
        ParseCase{"leading_dot", ".device", ".device"},
        ParseCase{"map_literal", "{'a': 1, 2: 'b',}", R"({"a":1,2:"b",})"},
        ParseCase{"list_trailing_comma", "[1, 2,]", "[1,2,]"},
        ParseCase{"message", "google.protobuf.Int64Value{value: 1}",
                  "google.protobuf.Int64Value{value:1,}"},
        ParseCase{"has_macro", "has(a.b)", "has(a.b)"},
        ParseCase{"all_macro", "l.all(x, x > 0)", "all(l;x,_>_(x,0))"},
        ParseCase{"exists_one_macro", "l.exists_one(x, x)", "exists_one(l;x,x)"},
        ParseCase{"map_macro_with_filter", "l.map(x, x > 1, x * 2)",
                  "map(l;x,_>_(x,1),_*_(x,2))"},
        ParseCase{"filter_macro", "l.filter(x, x)", "filter(l;x,x)"},
        ParseCase{"comment", "1 // one\n+ 2", "_+_(1,2)"},
        ParseCase{"long_or_chain_is_balanced", "a || b || c || d",
                  "_||_(_||_(a,b),_||_(c,d))"}),
    testing::NoteName());

struct ErrorCase {
  std::string_view note;
  std::string expression;
  std::string message;  // the start of the error message, with its position
};

class SyntaxErrorTest : public ::testing::TestWithParam<ErrorCase> {};

// A syntax error says where it is.
TEST_P(SyntaxErrorTest, NamesThePosition) {
  const auto program = compile(GetParam().expression);
  ASSERT_FALSE(program);
  EXPECT_EQ(program.error().message.substr(0, GetParam().message.size()), GetParam().message)
      << program.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Cel, SyntaxErrorTest,
    ::testing::Values(
        ErrorCase{"unbalanced_paren", "(device.driver == 'x'", "CEL syntax error at 1:22: expected ')'"},
        ErrorCase{"single_equals", "device.driver = 'x'", "CEL syntax error at 1:15: unexpected character '='"},
        ErrorCase{"second_line", "device.driver ==\n  && true", "CEL syntax error at 2:3: unexpected '&&'"},
        ErrorCase{"unterminated_string", "'abc", "CEL syntax error at 1:1: unterminated string"},
        ErrorCase{"newline_in_string", "'a\nb'", "CEL syntax error at 1:1: unterminated string"},
        ErrorCase{"bad_escape", R"('\q')", "CEL syntax error at 1:2: invalid escape"},
        ErrorCase{"int_overflow", "9223372036854775808", "CEL syntax error at 1:1: invalid int literal"},
        ErrorCase{"uint_overflow", "18446744073709551616u", "CEL syntax error at 1:1: invalid uint literal"},
        ErrorCase{"reserved_word", "if", "CEL syntax error at 1:1: reserved identifier 'if'"},
        ErrorCase{"has_needs_select", "has(a)", "CEL syntax error at 1:1: invalid argument to has()"},
        ErrorCase{"macro_variable", "l.all(x.y, true)", "CEL syntax error at 1:8: argument must be a simple name"},
        ErrorCase{"empty", "", "CEL syntax error at 1:1: unexpected end of expression"},
        ErrorCase{"trailing_token", "a b", "CEL syntax error at 1:3: unexpected 'b'"},
        ErrorCase{"not_then_minus_identifier", "e-!-a", "CEL syntax error at 1:4: unexpected '-'"},
        ErrorCase{"unicode_escape_in_bytes", R"(b'\u0041')", "CEL syntax error at 1:3: unicode escape"},
        ErrorCase{"surrogate", R"('\ud800')", "CEL syntax error at 1:2: invalid unicode code point"},
        ErrorCase{"invalid_utf8", "'\xff'", "CEL syntax error at 1:1: invalid UTF-8"}),
    testing::NoteName());

// Nesting beyond the limit is an error, not a stack overflow.
TEST(CelParser, RejectsDeepNesting) {
  const std::string deep = std::string(10'000, '(') + "1" + std::string(10'000, ')');
  const auto program = compile(deep);
  ASSERT_FALSE(program);
  EXPECT_NE(program.error().message.find("nests more than"), std::string::npos);
  const std::string chain = "1" + [] {
    std::string text;
    for (int i = 0; i < 1000; ++i) {
      text += " + 1";
    }
    return text;
  }();
  EXPECT_FALSE(compile(chain));
}

// Long || chains are balanced, so they parse and evaluate however long they are.
TEST(CelParser, AcceptsLongLogicalChains) {
  std::string chain = "false";
  for (int i = 0; i < 5000; ++i) {
    chain += " || false";
  }
  chain += " || true";
  const auto program = compile(chain);
  ASSERT_TRUE(program) << program.error().to_string();
  EXPECT_EQ(evaluate(*program, Activation{}).outcome, Outcome::kTrue);
}

// Expressions longer than the limit are refused before parsing.
TEST(CelParser, RejectsOversizedExpressions) {
  const auto program = compile(std::string(kMaxExpressionSize + 1, ' '));
  ASSERT_FALSE(program);
  EXPECT_EQ(program.error().code, ErrorCode::kTooLarge);
}

}  // namespace
}  // namespace topoguard::cel

namespace topoguard::cel {
namespace {

struct AttributeCase {
  std::string_view note;
  std::string expression;
  std::vector<std::string> attributes;
};

class AttributesReadTest : public ::testing::TestWithParam<AttributeCase> {};

// Attribute reads in both CEL spellings become qualified names; other reads are not attributes.
TEST_P(AttributesReadTest, FindsQualifiedNames) {
  const auto program = compile(GetParam().expression);
  ASSERT_TRUE(program) << program.error().to_string();
  EXPECT_EQ(attributes_read(*program), GetParam().attributes);
}

INSTANTIATE_TEST_SUITE_P(
    Cel, AttributesReadTest,
    ::testing::Values(
        AttributeCase{"dotted", R"(device.attributes["dra.net"].numaNode == 0)", {"dra.net/numaNode"}},
        AttributeCase{"indexed_single_quotes", R"(device.attributes['dra.net']['rdma'] == true)", {"dra.net/rdma"}},
        AttributeCase{"spaces_and_newlines",
                      "device.attributes [ \"resource.kubernetes.io\" ]\n  [\"pciBusID\"] in [\"0001:00:00.0\"]",
                      {"resource.kubernetes.io/pciBusID"}},
        AttributeCase{"two_reads", R"(device.attributes["dra.net"].rdma && device.attributes["dra.net"]["numaNode"] == 1)",
                      {"dra.net/rdma", "dra.net/numaNode"}},
        AttributeCase{"has", R"(has(device.attributes["dra.net"].numaNode))", {"dra.net/numaNode"}},
        AttributeCase{"map_only", R"(device.attributes["dra.net"] != null)", {}},
        AttributeCase{"in_a_string", R"("device.attributes[\"x.io\"].y" == device.driver)", {}},
        AttributeCase{"capacity_is_not_an_attribute", R"(device.capacity["x.io"].memory.isInteger())", {}}),
    testing::NoteName());

// String literals are listed in source order.
TEST(CelInspect, StringLiterals) {
  const auto program = compile(R"(device.driver in ["a", 'b'] || device.attributes["c"].d == "e")");
  ASSERT_TRUE(program);
  EXPECT_EQ(string_literals(*program), (std::vector<std::string>{"a", "b", "c", "e"}));
}

// may_read_driver is conservative: only `device.attributes` / `device.capacity` uses are blind.
TEST(CelInspect, MayReadDriver) {
  const std::pair<std::string, bool> cases[] = {
      {R"(device.attributes["dra.net"].rdma == true)", false},
      {R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)", false},
      {R"(has(device.attributes["x.io"].y) && "gpu.nvidia.com" in ["a"])", false},
      {R"(device.driver == "gpu.nvidia.com")", true},
      {R"(device["driver"] == "gpu.nvidia.com")", true},
      {R"(.device.driver.startsWith("gpu"))", true},
      {R"(device.attributes["dra.net"].rdma && device.driver == "dra.net")", true},
      {R"([device].exists(d, d.driver == "x"))", true},
      {R"(device == null)", true},
  };
  for (const auto& [expression, reads] : cases) {
    const auto program = compile(expression);
    ASSERT_TRUE(program) << expression << ": " << program.error().to_string();
    EXPECT_EQ(may_read_driver(*program), reads) << expression;
  }
}

// attribute_read names the attribute only when the whole expression is one read of it (what a
// derived attribute must be to stand for that attribute); a test, conversion or operation is not.
TEST(CelInspect, AttributeRead) {
  const std::pair<std::string, std::string> cases[] = {
      {R"(device.attributes["resource.kubernetes.io"].pcieRoot)",
       "resource.kubernetes.io/pcieRoot"},
      {R"(device.attributes['dra.net']["numaNode"])", "dra.net/numaNode"},
      {R"(.device.attributes["x.io"].y)", "x.io/y"},
      {R"(has(device.attributes["x.io"].y))", ""},
      {R"(string(device.attributes["x.io"].y))", ""},
      {R"(device.attributes["x.io"].y + "")", ""},
      {R"(device.attributes["x.io"])", ""},
      {R"(device.capacity["x.io"].y)", ""},
      {R"("any")", ""},
  };
  for (const auto& [expression, attribute] : cases) {
    const auto program = compile(expression);
    ASSERT_TRUE(program) << expression << ": " << program.error().to_string();
    EXPECT_EQ(attribute_read(*program), attribute) << expression;
  }
}

// Compiled programs are kept by text: the same text gives the same program after many others
// have been compiled (the cache starting over on the way), and a kept program is not confused
// with another.
TEST(CelCompile, KeptProgramsStayCorrect) {
  const auto first = compile(R"(device.driver == "kept.example.com")");
  ASSERT_TRUE(first);
  for (int i = 0; i < 10'000; ++i) {
    const auto other = compile("device.driver == \"d" + std::to_string(i) + ".example.com\"");
    ASSERT_TRUE(other);
  }
  const auto again = compile(R"(device.driver == "kept.example.com")");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->source(), first->source());
  Activation device;
  device.driver = "kept.example.com";
  EXPECT_EQ(evaluate(*again, device).outcome, Outcome::kTrue);
  device.driver = "d7.example.com";
  EXPECT_EQ(evaluate(*again, device).outcome, Outcome::kFalse);
  EXPECT_FALSE(compile("device.driver =="));  // errors are never kept as programs
  EXPECT_FALSE(compile("device.driver =="));
}

}  // namespace
}  // namespace topoguard::cel
