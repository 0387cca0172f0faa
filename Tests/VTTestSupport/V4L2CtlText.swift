import Foundation

/// What v4l2-ctl prints, read back for comparison.
public enum V4L2CtlText {
    /// `--list-formats-ext` as lines "FOURCC WxH fps,fps,…", sizes and rates in the order
    /// listed.
    public static func formatTable(_ text: String) -> [String] {
        var lines: [String] = []
        var fourcc = ""
        var size = ""
        var rates: [String] = []
        func flush() {
            if !size.isEmpty { lines.append("\(fourcc) \(size) \(rates.joined(separator: ","))") }
            size = ""
            rates = []
        }
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("["), let quote = line.firstIndex(of: "'") {
                flush()
                fourcc = String(line[line.index(after: quote)...].prefix(4)).trimmingCharacters(in: .whitespaces)
            } else if line.hasPrefix("Size: Discrete ") {
                flush()
                size = String(line.dropFirst("Size: Discrete ".count))
            } else if line.hasPrefix("Interval: Discrete "), let open = line.firstIndex(of: "("),
                      let rate = Double(line[line.index(after: open)...].prefix { $0 != " " }) {
                rates.append(String(Int(rate.rounded())))
            }
        }
        flush()
        return lines
    }

    /// Every number that follows `label` in a text, e.g. the "seq:" values of
    /// `v4l2-ctl --verbose`; negative ones too (a "delta:" when timestamps go back).
    public static func numbers(after label: String, in text: String) -> [Double] {
        text.components(separatedBy: label).dropFirst().compactMap { rest in
            let number = rest.drop { $0 == " " }
            let sign = number.first == "-" ? "-" : ""
            return Double(sign + number.dropFirst(sign.count).prefix { $0.isNumber || $0 == "." })
        }
    }

    /// The fourccs of `--list-formats-ext` whose description ends with ", <mark>)".
    public static func fourCCs(_ text: String, marked mark: String) -> [String?] {
        text.split(separator: "\n").filter { $0.contains(", \(mark))") }.compactMap { line in
            line.firstIndex(of: "'").map { String(line[line.index(after: $0)...].prefix(4)) }
        }
    }

    public struct Control: Sendable {
        public var name: String
        public var type: String
        /// min, max, step, default, value, flags as printed.
        public var fields: [String: String]
        /// "1: 50 Hz", as printed under a menu control.
        public var menu: [String]
    }

    /// The controls of `--list-ctrls`, `--list-ctrls-menus` or `--all`, in order.
    public static func controls(_ text: String) -> [Control] {
        var controls: [Control] = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count >= 4, words[1].hasPrefix("0x"), words[2].hasPrefix("(") {
                var fields: [String: String] = [:]
                for word in words.dropFirst(4) {
                    let parts = word.split(separator: "=", maxSplits: 1)
                    if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
                }
                controls.append(Control(name: String(words[0]), type: String(words[2].dropFirst().dropLast()),
                                        fields: fields, menu: []))
            } else if line.hasPrefix("\t"), !controls.isEmpty {
                controls[controls.count - 1].menu.append(line.trimmingCharacters(in: .whitespaces))
            }
        }
        return controls
    }
}
