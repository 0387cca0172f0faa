import Foundation

/// Choices a test makes at random from a seed it prints, so a failure can be repeated exactly:
/// SplitMix64, with its own draws and shuffle (the standard library's may change between
/// toolchains, which would make an old seed choose differently).
public struct SeededRandom: Sendable {
    public let seed: UInt64
    private var state: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// The seed from the environment variable `name` (decimal or 0x hexadecimal), else `fallback`.
    public static func seed(from name: String, default fallback: UInt64) -> UInt64 {
        guard let text = ProcessInfo.processInfo.environment[name], !text.isEmpty else { return fallback }
        let parsed = text.lowercased().hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
        guard let parsed else { preconditionFailure("\(name)=\(text) is not a number") }
        return parsed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `range`.
    public mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    public mutating func coin() -> Bool { next() & 1 == 1 }

    /// Fisher–Yates.
    public mutating func shuffle<T>(_ items: inout [T]) {
        guard items.count > 1 else { return }
        for i in stride(from: items.count - 1, to: 0, by: -1) {
            items.swapAt(i, next(in: 0...i))
        }
    }
}
