// A minimal XML reader, enough for RTK's geometry files: elements,
// attributes, text and CDATA (comments, processing instructions and
// declarations skipped), with limits on size and depth so that a hostile
// file cannot exhaust memory or the stack. Internal to geometry_io.cpp; kept
// apart because reading XML is a job of its own.
#pragma once
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fdk/adapters/error.hpp"

namespace fdk {
namespace adapters {
namespace xml_detail {

constexpr size_t kMaxXmlBytes = 256u << 20;
constexpr int kMaxXmlDepth = 64;

struct XmlNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string text;
  std::vector<size_t> children;
  int line = 0;
};

class XmlParser {
 public:
  XmlParser(const std::string& s, const std::string& name) : s_(s), name_(name) {}

  // Returns the nodes; nodes[root] is the document element.
  std::vector<XmlNode> parse(size_t* root) {
    if (s_.size() > kMaxXmlBytes) error("the file is too large for a geometry file");
    std::vector<size_t> stack;
    bool have_root = false;
    size_t i = 0;
    // A UTF-8 byte order mark.
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;
    while (i < s_.size()) {
      if (s_[i] != '<') {
        const size_t end = std::min(s_.find('<', i), s_.size());
        std::string text = decode(i, end);
        if (stack.empty()) {
          if (text.find_first_not_of(" \t\r\n") != std::string::npos) {
            error("text outside the root element");
          }
        } else {
          nodes_[stack.back()].text += text;
        }
        advance(end);
        i = end;
        continue;
      }
      advance(i);
      if (s_.compare(i, 4, "<!--") == 0) {
        i = skip_past(i + 4, "-->", "an unterminated comment");
      } else if (s_.compare(i, 9, "<![CDATA[") == 0) {
        const size_t end = s_.find("]]>", i + 9);
        if (end == std::string::npos) error("an unterminated CDATA section");
        if (stack.empty()) error("CDATA outside the root element");
        nodes_[stack.back()].text.append(s_, i + 9, end - (i + 9));
        i = end + 3;
      } else if (s_.compare(i, 2, "<?") == 0) {
        i = skip_past(i + 2, "?>", "an unterminated processing instruction");
      } else if (s_.compare(i, 2, "<!") == 0) {
        // DOCTYPE and other declarations, with an internal subset in [].
        int depth = 0;
        size_t j = i + 2;
        for (; j < s_.size(); ++j) {
          if (s_[j] == '[') ++depth;
          else if (s_[j] == ']') --depth;
          else if (s_[j] == '>' && depth <= 0) break;
        }
        if (j >= s_.size()) error("an unterminated declaration");
        i = j + 1;
      } else if (s_.compare(i, 2, "</") == 0) {
        size_t j = i + 2;
        const std::string tag = read_name(j);
        j = skip_space(j);
        if (j >= s_.size() || s_[j] != '>') error("a malformed end tag </" + tag);
        if (stack.empty() || nodes_[stack.back()].name != tag) {
          error("</" + tag + "> does not close " +
                (stack.empty() ? std::string("any element")
                               : "<" + nodes_[stack.back()].name + "> (line " +
                                     std::to_string(nodes_[stack.back()].line) + ")"));
        }
        stack.pop_back();
        i = j + 1;
      } else {
        size_t j = i + 1;
        XmlNode node;
        node.line = line_;
        node.name = read_name(j);
        for (;;) {
          j = skip_space(j);
          if (j >= s_.size()) error("an unterminated tag <" + node.name);
          if (s_[j] == '>' || s_.compare(j, 2, "/>") == 0) break;
          std::string attr = read_name(j);
          j = skip_space(j);
          if (j >= s_.size() || s_[j] != '=') error("attribute '" + attr + "' without a value");
          j = skip_space(j + 1);
          if (j >= s_.size() || (s_[j] != '"' && s_[j] != '\'')) {
            error("attribute '" + attr + "' without quotes");
          }
          const char quote = s_[j];
          const size_t end = s_.find(quote, j + 1);
          if (end == std::string::npos) error("an unterminated attribute value");
          node.attributes.emplace_back(attr, decode(j + 1, end));
          j = end + 1;
        }
        const bool self_closing = s_[j] == '/';
        i = j + (self_closing ? 2 : 1);
        if (stack.empty()) {
          if (have_root) error("a second root element <" + node.name + ">");
          have_root = true;
          *root = nodes_.size();
        } else {
          nodes_[stack.back()].children.push_back(nodes_.size());
        }
        nodes_.push_back(std::move(node));
        if (!self_closing) {
          if (static_cast<int>(stack.size()) >= kMaxXmlDepth) error("elements nested too deep");
          stack.push_back(nodes_.size() - 1);
        }
      }
    }
    if (!stack.empty()) {
      advance(s_.size());
      error("<" + nodes_[stack.back()].name + "> (line " +
            std::to_string(nodes_[stack.back()].line) + ") is never closed");
    }
    if (!have_root) error("no XML element");
    return std::move(nodes_);
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    fail(ErrorKind::kInput,
         "geometry '" + name_ + "' line " + std::to_string(line_) + ": " + what);
  }

  void advance(size_t to) {
    to = std::min(to, s_.size());
    if (to <= counted_) return;
    line_ += static_cast<int>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(counted_),
                                         s_.begin() + static_cast<std::ptrdiff_t>(to), '\n'));
    counted_ = to;
  }

  size_t skip_past(size_t from, const char* end_marker, const char* what) {
    const size_t end = s_.find(end_marker, from);
    if (end == std::string::npos) error(what);
    return end + std::strlen(end_marker);
  }

  size_t skip_space(size_t j) {
    while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t' || s_[j] == '\r' || s_[j] == '\n')) {
      ++j;
    }
    advance(j);
    return j;
  }

  static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == ':' || static_cast<unsigned char>(c) >= 0x80;
  }

  std::string read_name(size_t& j) {
    const size_t start = j;
    while (j < s_.size() && name_char(s_[j])) ++j;
    if (j == start) error("a malformed tag");
    return s_.substr(start, j - start);
  }

  std::string decode(size_t begin, size_t end) {
    std::string out;
    out.reserve(end - begin);
    for (size_t k = begin; k < end; ++k) {
      if (s_[k] != '&') {
        out += s_[k];
        continue;
      }
      const size_t semi = s_.find(';', k);
      if (semi == std::string::npos || semi >= end || semi - k > 12) {
        advance(k);
        error("a malformed character reference");
      }
      const std::string ref = s_.substr(k + 1, semi - k - 1);
      if (ref == "lt") out += '<';
      else if (ref == "gt") out += '>';
      else if (ref == "amp") out += '&';
      else if (ref == "quot") out += '"';
      else if (ref == "apos") out += '\'';
      else if (ref.size() > 1 && ref[0] == '#') {
        char* stop = nullptr;
        const bool hex = ref[1] == 'x' || ref[1] == 'X';
        const char* digits = ref.c_str() + (hex ? 2 : 1);
        errno = 0;
        const unsigned long code = std::strtoul(digits, &stop, hex ? 16 : 10);
        if (*digits == '\0' || *stop != '\0' || errno || code == 0 || code > 0x10FFFF) {
          advance(k);
          error("a malformed character reference &" + ref + ";");
        }
        // UTF-8.
        if (code < 0x80) {
          out += static_cast<char>(code);
        } else if (code < 0x800) {
          out += static_cast<char>(0xC0 | (code >> 6));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
          out += static_cast<char>(0xE0 | (code >> 12));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          out += static_cast<char>(0xF0 | (code >> 18));
          out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        }
      } else {
        advance(k);
        error("an unknown entity &" + ref + ";");
      }
      k = semi;
    }
    return out;
  }

  const std::string& s_;
  const std::string& name_;
  std::vector<XmlNode> nodes_;
  int line_ = 1;
  size_t counted_ = 0;
};

}  // namespace xml_detail
}  // namespace adapters
}  // namespace fdk
