/// Capture → written latencies in fixed memory: 0.1 ms buckets up to 5 s, so a recording of
/// any length keeps the same few hundred kilobytes; longer latencies share one last bucket.
public struct LatencyHistogram: Sendable, Equatable {
    static let resolution = 0.1
    static let bucketCount = 50_000
    private var counts: [UInt32]
    public private(set) var count = 0
    private var maximum = 0.0

    public init() {
        counts = Array(repeating: 0, count: Self.bucketCount + 1)
    }

    public mutating func add(milliseconds: Double) {
        let bucket = min(Self.bucketCount, max(0, Int(milliseconds / Self.resolution)))
        counts[bucket] &+= 1
        count += 1
        maximum = max(maximum, milliseconds)
    }

    /// The `fraction` quantile (0…1) to within one bucket (the bucket's middle), nil when
    /// empty. In the last bucket, the largest latency seen.
    public func quantile(_ fraction: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((Double(count) * fraction).rounded(.up)))
        var seen = 0
        for (bucket, n) in counts.enumerated() {
            seen += Int(n)
            if seen >= rank {
                return bucket == Self.bucketCount ? maximum : (Double(bucket) + 0.5) * Self.resolution
            }
        }
        return maximum
    }
}
