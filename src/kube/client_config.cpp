#include "topoguard/kube/client_config.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "topoguard/common/base64.h"
#include "topoguard/common/text_file.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/pem/pem.h"

namespace topoguard::kube {

namespace {

constexpr std::string_view kExecExtension = "client.authentication.k8s.io/exec";
std::optional<std::string> process_env(const std::string& name) {
  const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): read only
  if (value == nullptr) {
    return std::nullopt;
  }
  return std::string(value);
}

// Reads a file the configuration names, capped by its kind; nullopt with `error` set (why not,
// with the cap on an overrun) when it cannot.
std::optional<std::string> slurp(const std::string& path, std::size_t limit, std::string& error) {
  Result<std::string> text = read_text_file(path, limit);
  if (!text) {
    error = text.error().message;
    return std::nullopt;
  }
  return std::move(*text);
}

std::string resolve(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/') {
    return path;
  }
  return (std::filesystem::path(dir) / path).lexically_normal().string();
}

// Whether PEM text holds certificates, every one of them readable.
bool holds_certificates(const std::string& pem) { return pem::read_certificates(pem).has_value(); }

// Empty when the key parses and belongs to the first certificate; else why not.
std::string check_key_pair(const std::string& cert_pem, const std::string& key_pem) {
  const Result<pem::CertificatePtr> cert = pem::read_first_certificate(cert_pem);
  if (!cert) {
    return "the client certificate is not a PEM certificate";
  }
  const Result<pem::PrivateKeyPtr> key = pem::read_private_key(key_pem);
  if (!key) {
    return "the client key is not a PEM private key";
  }
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return "the client key does not belong to the client certificate";
  }
  return "";
}

// One parsed kubeconfig file.
struct Source {
  std::string file;
  std::string dir;
  YamlDocument document;
};

// A named cluster, user or context: the object under its `cluster`/`user`/`context` key.
struct Entry {
  const Source* source = nullptr;
  std::string pointer;  // of the inner object
  const Json* value = nullptr;
};

SourceLocation where(const Source& source, const std::string& pointer) {
  return SourceLocation{source.file, source.document.lines.line_of(pointer), pointer};
}

Error error_at(ErrorCode code, const Source& source, const std::string& pointer,
               std::string message) {
  return Error{code, std::move(message), where(source, pointer)};
}

// Typed reads of one kubeconfig object's fields, with the location of each.
class Fields {
 public:
  explicit Fields(const Entry& entry) : entry_(entry) {}

  [[nodiscard]] std::string pointer(std::string_view key) const {
    return append_pointer(entry_.pointer, key);
  }
  [[nodiscard]] bool has(std::string_view key) const {
    const Json* value = member(*entry_.value, key);
    return value != nullptr && !value->is_null();
  }
  [[nodiscard]] Error error(ErrorCode code, std::string_view key, std::string message) const {
    return error_at(code, *entry_.source, pointer(key), std::move(message));
  }
  // "" when absent or null.
  [[nodiscard]] Result<std::string> text(std::string_view key) const {
    const Json* value = member(*entry_.value, key);
    if (value == nullptr || value->is_null()) {
      return std::string();
    }
    if (!value->is_string()) {
      return error(ErrorCode::kWrongType, key,
                   std::string("must be a string, not ") + json_type_name(*value));
    }
    return value->get<std::string>();
  }
  [[nodiscard]] Result<bool> flag(std::string_view key) const {
    const Json* value = member(*entry_.value, key);
    if (value == nullptr || value->is_null()) {
      return false;
    }
    if (!value->is_boolean()) {
      return error(ErrorCode::kWrongType, key,
                   std::string("must be true or false, not ") + json_type_name(*value));
    }
    return value->get<bool>();
  }
  [[nodiscard]] const Source& source() const { return *entry_.source; }
  [[nodiscard]] const Json& value() const { return *entry_.value; }

 private:
  const Entry& entry_;
};

// A PEM value from `<base>-data` (base64) or `<base>` (a file): "" when neither is set.
Result<std::string> pem_field(const Fields& fields, const std::string& base, bool certificate) {
  const std::string data_key = base + "-data";
  Result<std::string> data = fields.text(data_key);
  if (!data) {
    return data.error();
  }
  Result<std::string> file = fields.text(base);
  if (!file) {
    return file.error();
  }
  if (!data->empty() && !file->empty()) {
    return fields.error(ErrorCode::kInvalidValue, data_key,
                        base + "-data and " + base + " are both set; set one");
  }
  std::string pem;
  std::string key = data_key;
  if (!data->empty()) {
    std::optional<std::string> decoded = base64_decode(*data);
    if (!decoded) {
      return fields.error(ErrorCode::kInvalidValue, data_key, "is not base64");
    }
    pem = std::move(*decoded);
  } else if (!file->empty()) {
    key = base;
    const std::string path = resolve(fields.source().dir, *file);
    std::string reason;
    std::optional<std::string> content = slurp(path, kMaxCredentialFileBytes, reason);
    if (!content) {
      return fields.error(ErrorCode::kIo, base, "cannot read \"" + path + "\": " + reason);
    }
    pem = std::move(*content);
  } else {
    return std::string();
  }
  if (certificate && !holds_certificates(pem)) {
    return fields.error(ErrorCode::kInvalidValue, key, "holds no PEM certificate");
  }
  return pem;
}

Status parse_exec(const Fields& user, ClientConfig& config) {
  const Json& exec = *member(user.value(), "exec");
  const std::string pointer = user.pointer("exec");
  if (!exec.is_object()) {
    return error_at(ErrorCode::kWrongType, user.source(), pointer, "must be a mapping");
  }
  Entry entry{&user.source(), pointer, &exec};
  Fields fields(entry);
  ExecConfig plugin;
  plugin.location = where(user.source(), pointer);
  Result<std::string> api_version = fields.text("apiVersion");
  if (!api_version) {
    return api_version.error();
  }
  if (*api_version != "client.authentication.k8s.io/v1" &&
      *api_version != "client.authentication.k8s.io/v1beta1") {
    return fields.error(
        ErrorCode::kInvalidValue, "apiVersion",
        api_version->empty()
            ? "is required (client.authentication.k8s.io/v1)"
            : "\"" + *api_version + "\" is not client.authentication.k8s.io/v1 or v1beta1");
  }
  plugin.api_version = *api_version;
  Result<std::string> command = fields.text("command");
  if (!command) {
    return command.error();
  }
  if (command->empty()) {
    return fields.error(ErrorCode::kMissingField, "command", "is required");
  }
  plugin.command =
      command->find('/') == std::string::npos ? *command : resolve(user.source().dir, *command);
  if (const Json* args = member(exec, "args"); args != nullptr && !args->is_null()) {
    if (!args->is_array()) {
      return fields.error(ErrorCode::kWrongType, "args", "must be a list of strings");
    }
    for (std::size_t i = 0; i < args->size(); ++i) {
      if (!(*args)[i].is_string()) {
        return error_at(ErrorCode::kWrongType, user.source(),
                        append_pointer(fields.pointer("args"), i), "must be a string");
      }
      plugin.args.push_back((*args)[i].get<std::string>());
    }
  }
  if (const Json* env = member(exec, "env"); env != nullptr && !env->is_null()) {
    if (!env->is_array()) {
      return fields.error(ErrorCode::kWrongType, "env", "must be a list of {name, value}");
    }
    for (std::size_t i = 0; i < env->size(); ++i) {
      const Json& variable = (*env)[i];
      const std::string at = append_pointer(fields.pointer("env"), i);
      if (!variable.is_object() || !member(variable, "name") ||
          !(*member(variable, "name")).is_string() ||
          (member(variable, "value") && !(*member(variable, "value")).is_string())) {
        return error_at(ErrorCode::kWrongType, user.source(), at,
                        "must be {name: string, value: string}");
      }
      plugin.env.emplace_back(string_member(variable, "name"), string_member(variable, "value"));
    }
  }
  Result<std::string> mode = fields.text("interactiveMode");
  if (!mode) {
    return mode.error();
  }
  if (mode->empty()) {
    if (plugin.api_version == "client.authentication.k8s.io/v1") {
      return fields.error(ErrorCode::kMissingField, "interactiveMode",
                          "is required for client.authentication.k8s.io/v1 (Never or "
                          "IfAvailable)");
    }
    *mode = "IfAvailable";
  }
  if (*mode == "Always") {
    return fields.error(ErrorCode::kInvalidValue, "interactiveMode",
                        "Always needs a terminal, which topoguard never has; use Never or "
                        "IfAvailable");
  }
  if (*mode != "Never" && *mode != "IfAvailable") {
    return fields.error(ErrorCode::kInvalidValue, "interactiveMode",
                        "\"" + *mode + "\" is not Never, IfAvailable or Always");
  }
  plugin.interactive_mode = *mode;
  Result<bool> provide = fields.flag("provideClusterInfo");
  if (!provide) {
    return provide.error();
  }
  plugin.provide_cluster_info = *provide;
  Result<std::string> hint = fields.text("installHint");
  if (!hint) {
    return hint.error();
  }
  plugin.install_hint = *hint;
  config.exec = std::move(plugin);
  return Ok{};
}

// Also hands back the cluster's exec extension (Json null when absent).
Status read_cluster(const Entry& entry, ClientConfig& config, Json& exec_extension) {
  Fields fields(entry);
  Result<std::string> server = fields.text("server");
  if (!server) {
    return server.error();
  }
  if (server->empty()) {
    return error_at(ErrorCode::kMissingField, *entry.source, entry.pointer, "server is required");
  }
  if (Status parsed = parse_server_url(*server, config); !parsed) {
    return fields.error(ErrorCode::kInvalidValue, "server", parsed.error().message);
  }
  Result<std::string> ca = pem_field(fields, "certificate-authority", true);
  if (!ca) {
    return ca.error();
  }
  config.ca_pem = std::move(*ca);
  Result<bool> insecure = fields.flag("insecure-skip-tls-verify");
  if (!insecure) {
    return insecure.error();
  }
  config.insecure_skip_tls_verify = *insecure;
  if (config.insecure_skip_tls_verify && !config.ca_pem.empty()) {
    return fields.error(ErrorCode::kInvalidValue, "insecure-skip-tls-verify",
                        "is true while a certificate authority is set; set one");
  }
  Result<std::string> server_name = fields.text("tls-server-name");
  if (!server_name) {
    return server_name.error();
  }
  config.tls_server_name = *server_name;
  if (fields.has("proxy-url")) {
    return fields.error(ErrorCode::kUnknownField, "proxy-url",
                        "proxies are not supported; reach the API server directly");
  }
  if (const Json* extensions = member(fields.value(), "extensions");
      extensions != nullptr && extensions->is_array()) {
    for (const Json& named : *extensions) {
      if (named.is_object() && string_member(named, "name") == kExecExtension) {
        if (const Json* extension = member(named, "extension")) {
          exec_extension = *extension;  // given back to the plugin in KUBERNETES_EXEC_INFO
        }
      }
    }
  }
  return Ok{};
}

Status read_user(const Entry& entry, ClientConfig& config) {
  Fields fields(entry);
  for (const char* key : {"auth-provider"}) {
    if (fields.has(key)) {
      return fields.error(ErrorCode::kUnknownField, key,
                          "auth-provider plugins are not supported (they were removed from "
                          "client-go); use an exec credential plugin");
    }
  }
  for (const char* key : {"as", "as-uid", "as-groups", "as-user-extra"}) {
    if (fields.has(key)) {
      return fields.error(ErrorCode::kUnknownField, key, "impersonation is not supported");
    }
  }
  Result<std::string> cert = pem_field(fields, "client-certificate", true);
  if (!cert) {
    return cert.error();
  }
  Result<std::string> key = pem_field(fields, "client-key", false);
  if (!key) {
    return key.error();
  }
  if (cert->empty() != key->empty()) {
    return error_at(ErrorCode::kMissingField, *entry.source, entry.pointer,
                    cert->empty() ? "client-key is set without client-certificate"
                                  : "client-certificate is set without client-key");
  }
  if (!cert->empty()) {
    if (std::string why = check_key_pair(*cert, *key); !why.empty()) {
      const bool data = fields.has("client-key-data");
      return fields.error(ErrorCode::kInvalidValue, data ? "client-key-data" : "client-key", why);
    }
  }
  config.client_certificate_pem = std::move(*cert);
  config.client_key_pem = std::move(*key);
  Result<std::string> token = fields.text("token");
  if (!token) {
    return token.error();
  }
  config.token = *token;
  Result<std::string> token_file = fields.text("tokenFile");
  if (!token_file) {
    return token_file.error();
  }
  if (!token_file->empty()) {
    config.token_file = resolve(entry.source->dir, *token_file);
    std::string reason;
    if (!slurp(config.token_file, kMaxTokenFileBytes, reason)) {
      return fields.error(ErrorCode::kIo, "tokenFile",
                          "cannot read \"" + config.token_file + "\": " + reason);
    }
  }
  Result<std::string> username = fields.text("username");
  if (!username) {
    return username.error();
  }
  Result<std::string> password = fields.text("password");
  if (!password) {
    return password.error();
  }
  config.username = *username;
  config.password = *password;
  const bool token_auth = !config.token.empty() || !config.token_file.empty();
  const bool basic_auth = !config.username.empty() || !config.password.empty();
  const bool exec_auth = fields.has("exec");
  if (static_cast<int>(token_auth) + static_cast<int>(basic_auth) + static_cast<int>(exec_auth) >
      1) {
    return error_at(ErrorCode::kInvalidValue, *entry.source, entry.pointer,
                    "more than one authentication method (token or tokenFile, "
                    "username/password, exec) is set; set one");
  }
  if (exec_auth) {
    return parse_exec(fields, config);
  }
  return Ok{};
}

// The named entries of one list (`clusters`, `users`, `contexts`) of a file, added to `into`
// unless an earlier file set the name.
Status collect(const Source& source, const char* list, const char* inner,
               std::map<std::string, Entry>& into) {
  const Json* entries = member(source.document.value, list);
  if (entries == nullptr || entries->is_null()) {
    return Ok{};
  }
  const std::string list_pointer = append_pointer("", list);
  if (!entries->is_array()) {
    return error_at(ErrorCode::kWrongType, source, list_pointer, "must be a list");
  }
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const Json& named = (*entries)[i];
    const std::string at = append_pointer(list_pointer, i);
    if (!named.is_object()) {
      return error_at(ErrorCode::kWrongType, source, at, "must be a mapping");
    }
    const Json* name = member(named, "name");
    if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      return error_at(ErrorCode::kMissingField, source, append_pointer(at, "name"),
                      "a name is required");
    }
    const Json* value = member(named, inner);
    const std::string inner_pointer = append_pointer(at, inner);
    if (value == nullptr || !value->is_object()) {
      return error_at(ErrorCode::kMissingField, source, inner_pointer, "must be a mapping");
    }
    into.try_emplace(name->get<std::string>(), Entry{&source, inner_pointer, value});
  }
  return Ok{};
}

std::string join_host_port(const std::string& host, const std::string& port) {
  if (host.find(':') != std::string::npos) {
    return "[" + host + "]:" + port;
  }
  return host + ":" + port;
}

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return "";
  }
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

}  // namespace

Status parse_server_url(const std::string& server, ClientConfig& config) {
  constexpr std::string_view kHttps = "https://";
  if (server.size() < kHttps.size() ||
      !std::equal(kHttps.begin(), kHttps.end(), server.begin(), [](char a, char b) {
        return a == std::tolower(static_cast<unsigned char>(b));
      })) {
    return Error{ErrorCode::kInvalidValue,
                 "\"" + server + "\": only https:// API servers are supported",
                 {}};
  }
  std::string_view rest = std::string_view(server).substr(kHttps.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Error{
        ErrorCode::kInvalidValue, "\"" + server + "\": a query or fragment is not allowed", {}};
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  while (!path.empty() && path.back() == '/') {
    path.pop_back();
  }
  if (authority.find('@') != std::string_view::npos) {
    return Error{
        ErrorCode::kInvalidValue, "\"" + server + "\": credentials in the URL are not allowed", {}};
  }
  std::string host;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return Error{ErrorCode::kInvalidValue, "\"" + server + "\": unclosed '[' in the host", {}};
    }
    host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Error{ErrorCode::kInvalidValue, "\"" + server + "\": bad text after ']'", {}};
      }
      port_text = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    if (colon != std::string_view::npos &&
        authority.find(':') != colon) {  // an unbracketed IPv6 address
      return Error{
          ErrorCode::kInvalidValue, "\"" + server + "\": an IPv6 address must be in brackets", {}};
    }
    host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
    }
  }
  if (host.empty()) {
    return Error{ErrorCode::kInvalidValue, "\"" + server + "\": no host", {}};
  }
  int port = 443;
  if (!port_text.empty()) {
    const auto [end, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 ||
        port > 65535) {
      return Error{ErrorCode::kInvalidValue, "\"" + server + "\": bad port", {}};
    }
  }
  config.server = server;
  config.host = std::move(host);
  config.port = port;
  config.base_path = std::move(path);
  return Ok{};
}

Result<ClientConfig> load_kubeconfig(const std::vector<std::string>& files,
                                     const std::string& context, bool require_all) {
  std::vector<std::unique_ptr<Source>> sources;
  std::set<std::string> seen;
  for (const std::string& file : files) {
    if (file.empty() || !seen.insert(file).second) {
      continue;
    }
    std::error_code ec;
    if (!require_all && !std::filesystem::exists(file, ec)) {
      continue;  // client-go skips missing files of $KUBECONFIG
    }
    std::string reason;
    std::optional<std::string> text = slurp(file, kMaxCredentialFileBytes, reason);
    if (!text) {
      return Error{ErrorCode::kIo, "cannot read kubeconfig: " + reason, {file, 0, ""}};
    }
    YamlStream stream = parse_yaml_stream(*text, file);
    if (!stream.errors.empty()) {
      return stream.errors.front();
    }
    if (stream.documents.size() > 1) {
      return Error{ErrorCode::kInvalidYaml,
                   "a kubeconfig is one YAML document",
                   {file, stream.documents[1].first_line, ""}};
    }
    auto source = std::make_unique<Source>();
    source->file = file;
    source->dir = std::filesystem::path(file).parent_path().string();
    if (source->dir.empty()) {
      source->dir = ".";
    }
    if (!stream.documents.empty()) {
      source->document = std::move(stream.documents.front());
    }
    if (source->document.value.is_null()) {
      source->document.value = Json::object();  // an empty file is an empty config
    }
    if (!source->document.value.is_object()) {
      return Error{ErrorCode::kWrongType, "a kubeconfig must be a mapping", {file, 1, ""}};
    }
    sources.push_back(std::move(source));
  }
  if (sources.empty()) {
    return Error{ErrorCode::kIo,
                 "no kubeconfig file exists among: " +
                     [&] {
                       std::string list;
                       for (const std::string& file : files) {
                         list += (list.empty() ? "" : ":") + file;
                       }
                       return list;
                     }(),
                 {}};
  }

  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> users;
  std::map<std::string, Entry> contexts;
  std::string current;
  const Source* current_source = nullptr;
  for (const auto& source : sources) {
    for (auto [list, inner, into] :
         {std::tuple{"clusters", "cluster", &clusters}, std::tuple{"users", "user", &users},
          std::tuple{"contexts", "context", &contexts}}) {
      if (Status collected = collect(*source, list, inner, *into); !collected) {
        return collected.error();
      }
    }
    if (current.empty()) {
      if (const Json* value = member(source->document.value, "current-context");
          value != nullptr && value->is_string() && !value->get_ref<const std::string&>().empty()) {
        current = value->get<std::string>();
        current_source = source.get();
      }
    }
  }

  const std::string name = context.empty() ? current : context;
  if (name.empty()) {
    return Error{ErrorCode::kMissingField,
                 "no current-context is set and no --context was given",
                 {sources.front()->file, 0, "/current-context"}};
  }
  const auto chosen = contexts.find(name);
  if (chosen == contexts.end()) {
    SourceLocation location = context.empty() && current_source != nullptr
                                  ? where(*current_source, "/current-context")
                                  : SourceLocation{sources.front()->file, 0, "/contexts"};
    return Error{ErrorCode::kInvalidValue, "context \"" + name + "\" is not defined",
                 std::move(location)};
  }
  Fields context_fields(chosen->second);
  Result<std::string> cluster_name = context_fields.text("cluster");
  if (!cluster_name) {
    return cluster_name.error();
  }
  Result<std::string> user_name = context_fields.text("user");
  if (!user_name) {
    return user_name.error();
  }
  Result<std::string> namespace_name = context_fields.text("namespace");
  if (!namespace_name) {
    return namespace_name.error();
  }
  const auto cluster = clusters.find(*cluster_name);
  if (cluster_name->empty() || cluster == clusters.end()) {
    return context_fields.error(ErrorCode::kInvalidValue, "cluster",
                                cluster_name->empty()
                                    ? "context \"" + name + "\" names no cluster"
                                    : "cluster \"" + *cluster_name + "\" is not defined");
  }
  ClientConfig config;
  config.context = name;
  config.namespace_ = *namespace_name;
  config.source = "kubeconfig " + sources.front()->file;
  Json exec_extension;
  if (Status read = read_cluster(cluster->second, config, exec_extension); !read) {
    return read.error();
  }
  if (!user_name->empty()) {
    const auto user = users.find(*user_name);
    if (user == users.end()) {
      return context_fields.error(ErrorCode::kInvalidValue, "user",
                                  "user \"" + *user_name + "\" is not defined");
    }
    if (Status read = read_user(user->second, config); !read) {
      return read.error();
    }
  }
  if (config.exec) {
    config.exec->cluster_config = std::move(exec_extension);
  }
  return config;
}

Result<ClientConfig> load_in_cluster_config(const LoadOptions& options) {
  const auto getenv = options.getenv ? options.getenv : process_env;
  const std::string host = getenv("KUBERNETES_SERVICE_HOST").value_or("");
  const std::string port = getenv("KUBERNETES_SERVICE_PORT").value_or("");
  if (host.empty() || port.empty()) {
    return Error{ErrorCode::kMissingField,
                 "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
                 "set",
                 {}};
  }
  ClientConfig config;
  if (Status parsed = parse_server_url("https://" + join_host_port(host, port), config); !parsed) {
    return Error{
        ErrorCode::kInvalidValue, "KUBERNETES_SERVICE_HOST/PORT: " + parsed.error().message, {}};
  }
  const std::filesystem::path dir(options.service_account_dir);
  config.token_file = (dir / "token").string();
  std::string reason;
  if (!slurp(config.token_file, kMaxTokenFileBytes, reason)) {
    return Error{ErrorCode::kIo,
                 "cannot read the service account token: " + reason,
                 {config.token_file, 0, ""}};
  }
  const std::string ca_file = (dir / "ca.crt").string();
  std::optional<std::string> ca = slurp(ca_file, kMaxCredentialFileBytes, reason);
  if (!ca) {
    return Error{ErrorCode::kIo, "cannot read the cluster CA: " + reason, {ca_file, 0, ""}};
  }
  if (!holds_certificates(*ca)) {
    return Error{ErrorCode::kInvalidValue, "holds no PEM certificate", {ca_file, 0, ""}};
  }
  config.ca_pem = std::move(*ca);
  if (std::optional<std::string> ns = slurp((dir / "namespace").string(), kMaxTokenFileBytes, reason)) {
    config.namespace_ = trim(std::move(*ns));
  }
  config.context = "in-cluster";
  config.source = "in-cluster";
  return config;
}

namespace {

Result<ClientConfig> locate_client_config(const LoadOptions& options) {
  const auto getenv = options.getenv ? options.getenv : process_env;
  if (!options.kubeconfig.empty()) {
    return load_kubeconfig({options.kubeconfig}, options.context, true);
  }
  if (const std::string list = getenv("KUBECONFIG").value_or(""); !list.empty()) {
    std::vector<std::string> files;
    std::string::size_type start = 0;
    while (start <= list.size()) {
      const auto colon = list.find(':', start);
      files.push_back(list.substr(start, colon == std::string::npos ? colon : colon - start));
      if (colon == std::string::npos) {
        break;
      }
      start = colon + 1;
    }
    Result<ClientConfig> loaded = load_kubeconfig(files, options.context, false);
    if (!loaded && loaded.error().location.file.empty()) {
      Error error = loaded.error();
      error.message = "KUBECONFIG: " + error.message;
      return error;
    }
    return loaded;
  }
  // An explicit context can only name a kubeconfig context: skip in-cluster then.
  if (options.context.empty() && !getenv("KUBERNETES_SERVICE_HOST").value_or("").empty()) {
    return load_in_cluster_config(options);
  }
  if (const std::string home = getenv("HOME").value_or(""); !home.empty()) {
    const std::string file = (std::filesystem::path(home) / ".kube" / "config").string();
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) {
      return load_kubeconfig({file}, options.context, true);
    }
  }
  return Error{ErrorCode::kMissingField,
               "no cluster configuration: pass --kubeconfig, set KUBECONFIG, run in a pod, or "
               "write ~/.kube/config",
               {}};
}

}  // namespace

Result<ClientConfig> load_client_config(const LoadOptions& options) {
  Result<ClientConfig> config = locate_client_config(options);
  if (config && config->exec) {
    config->exec->timeout = options.exec_timeout;
  }
  return config;
}

}  // namespace topoguard::kube
