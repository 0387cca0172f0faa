/// One figure `/metrics` exposes.
public struct LiveMetric: Sendable, Codable {
    public enum Kind: String, Sendable, Codable { case counter, gauge }

    /// Prometheus conventions: `vtrecord_` first, base units (`_seconds`, `_bytes`), `_total`
    /// at the end of a counter.
    public var name: String
    public var help: String
    public var kind: Kind
    public var labels: [(String, String)]
    public var value: Double

    public init(_ name: String, _ kind: Kind, _ value: Double, labels: [(String, String)] = [], help: String) {
        self.name = name
        self.kind = kind
        self.value = value
        self.labels = labels
        self.help = help
    }

    enum CodingKeys: String, CodingKey { case name, help, kind, labels, value }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        help = try c.decode(String.self, forKey: .help)
        kind = try c.decode(Kind.self, forKey: .kind)
        value = try c.decode(Double.self, forKey: .value)
        // Pairs, in their order: [["output", "srt1"], ...].
        labels = try c.decode([[String]].self, forKey: .labels).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(help, forKey: .help)
        try c.encode(kind, forKey: .kind)
        try c.encode(value, forKey: .value)
        try c.encode(labels.map { [$0.0, $0.1] }, forKey: .labels)
    }
}
