/// A rational time, as CoreMedia's `CMTime`: `value / timescale` seconds.
///
/// Capture timestamps, presentation and decode times all use it, so a frame rate such as
/// 30000/1001 is carried exactly instead of rounded to a Double.
public struct MediaTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var value: Int64
    public var timescale: Int32

    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime needs a positive timescale")
        self.value = value
        self.timescale = timescale
    }

    public static let zero = MediaTime(value: 0, timescale: 1)

    public init(seconds: Double, timescale: Int32) {
        self.init(value: Int64((seconds * Double(timescale)).rounded()), timescale: timescale)
    }

    public var seconds: Double { Double(value) / Double(timescale) }

    /// The same instant in another timescale, rounded to the nearest tick.
    public func converted(to newScale: Int32) -> MediaTime {
        if newScale == timescale { return self }
        let scaled = Int128(value) * Int128(newScale)
        let half = Int128(timescale) / 2
        let rounded = scaled >= 0 ? (scaled + half) / Int128(timescale) : (scaled - half) / Int128(timescale)
        return MediaTime(value: Int64(rounded), timescale: newScale)
    }

    /// `self − origin` in ticks of `newScale`, rounded once to the nearest: a time carried into
    /// a finer timescale and back comes home to its own tick.
    public func ticks(since origin: MediaTime, timescale newScale: Int32) -> Int64 {
        let numerator = (Int128(value) * Int128(origin.timescale) - Int128(origin.value) * Int128(timescale))
            * Int128(newScale)
        let denominator = Int128(timescale) * Int128(origin.timescale)
        let half = denominator / 2
        return Int64(numerator >= 0 ? (numerator + half) / denominator : (numerator - half) / denominator)
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    public func hash(into hasher: inout Hasher) {
        let g = gcd(abs(value), Int64(timescale))
        hasher.combine(value / max(g, 1))
        hasher.combine(Int64(timescale) / max(g, 1))
    }

    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        if lhs.timescale == rhs.timescale {
            return MediaTime(value: lhs.value + rhs.value, timescale: lhs.timescale)
        }
        let scale = max(lhs.timescale, rhs.timescale)
        return MediaTime(value: lhs.converted(to: scale).value + rhs.converted(to: scale).value,
                         timescale: scale)
    }

    public var description: String { "\(value)/\(timescale)" }
}

private func gcd(_ a: Int64, _ b: Int64) -> Int64 {
    var (a, b) = (a, b)
    while b != 0 { (a, b) = (b, a % b) }
    return a
}
