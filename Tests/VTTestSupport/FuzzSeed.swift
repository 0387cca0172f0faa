import Foundation

/// The seed of a fuzz run: FUZZ_SEED from the environment when set (to replay a failure),
/// else a fresh one. Either way it is printed before the run starts, so a run that dies with
/// the process can still be replayed.
public enum FuzzSeed {
    public static func seed(for target: String) -> UInt64 {
        let seed = SeededRandom.seed(from: "FUZZ_SEED", default: UInt64.random(in: 1...UInt64(UInt32.max)))
        print("fuzz \(target): seed \(seed) (FUZZ_SEED=\(seed) replays this run)")
        return seed
    }

    /// `count`, or FUZZ_ITERATIONS when set, for a longer run of the same tests.
    public static func iterations(_ count: Int) -> Int {
        ProcessInfo.processInfo.environment["FUZZ_ITERATIONS"].flatMap { Int($0) } ?? count
    }
}
