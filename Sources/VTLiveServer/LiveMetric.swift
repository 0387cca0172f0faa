/// One figure `/metrics` exposes.
public struct LiveMetric: Sendable {
    public enum Kind: String, Sendable { case counter, gauge }

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
}
