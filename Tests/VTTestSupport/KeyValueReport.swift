/// A test double's report as its C side writes it: `key=value` lines, read into `values`, with
/// numbers read back by key (-999 for a key that is missing or not a number, which no count
/// equals, so a check against it fails).
protocol KeyValueReport {
    var values: [String: String] { get }
}

extension KeyValueReport {
    static func values(of text: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    func number(_ key: String) -> Int { values[key].flatMap { Int($0) } ?? -999 }
}
