import Foundation

/// SplitMix64: a tiny generator whose whole state is one integer, so a fuzz run is fixed by
/// the seed it prints and replays the same inputs on any machine and toolchain (the standard
/// library's generator is neither seedable nor promised to stay the same).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range`; an empty range gives its lower bound.
    public mutating func int(in range: Range<Int>) -> Int {
        range.isEmpty ? range.lowerBound : Int.random(in: range, using: &self)
    }

    public mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    public mutating func element<T>(of array: [T]) -> T {
        array[int(in: 0..<array.count)]
    }
}

/// The seed of a fuzz run: FUZZ_SEED from the environment when set (to replay a failure),
/// else a fresh one. Either way it is printed before the run starts, so a run that dies with
/// the process can still be replayed.
public enum FuzzSeed {
    public static func seed(for target: String) -> UInt64 {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["FUZZ_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("fuzz \(target): seed \(seed) (FUZZ_SEED=\(seed) replays this run)")
        return seed
    }

    /// `count`, or FUZZ_ITERATIONS when set, for a longer run of the same tests.
    public static func iterations(_ count: Int) -> Int {
        ProcessInfo.processInfo.environment["FUZZ_ITERATIONS"].flatMap { Int($0) } ?? count
    }
}
