/// Makes malformed inputs from good ones: each call takes a corpus entry and applies one to four
/// mutations, chosen from those that break parsers in practice — flipped bits, bytes inserted
/// and removed, truncation, two inputs spliced together, length fields and numbers set to edge
/// values, and tokens (start codes, tags, keys) dropped in where they do not belong.
///
/// Everything it does follows from the generator, so an input is named by the seed and the
/// iteration that made it.
public struct Mutator {
    public enum Mutation: String, CaseIterable, Sendable {
        case flipBit, setByte, insertBytes, deleteRange, truncate, duplicateRange, splice
        case lengthField, token, number
    }

    public var generator: SeededGenerator
    public let corpus: [[UInt8]]
    /// Byte strings that mean something to the parser under test.
    public let tokens: [[UInt8]]
    /// Inputs never grow past this, so a run cannot slow down by growing its inputs.
    public let maximumSize: Int

    /// Start codes and the emulation prevention byte: the framing every H.264 reader splits on.
    public static let startCodeTokens: [[UInt8]] = [[0, 0, 1], [0, 0, 0, 1], [0, 0, 3], [0, 0], [0, 0, 0]]

    private static let interestingBytes: [UInt8] = [0x00, 0x01, 0x03, 0x07, 0x08, 0x0A, 0x20, 0x3D,
                                                    0x5B, 0x7F, 0x80, 0xFE, 0xFF]
    private static let interestingNumbers: [String] = [
        "0", "1", "-1", "2", "3", "7", "15", "16", "255", "256", "65535", "65536", "16383", "16384",
        "16385", "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "99999999999999999999999", "1e308", "1e309", "-0", "0x10", "nan", "inf", "1.5", "",
    ]

    public init(seed: UInt64, corpus: [[UInt8]], tokens: [[UInt8]] = [], maximumSize: Int = 1 << 16) {
        precondition(!corpus.isEmpty, "a mutator needs at least one input to start from")
        generator = SeededGenerator(seed: seed)
        self.corpus = corpus
        self.tokens = tokens + Self.startCodeTokens
        self.maximumSize = maximumSize
    }

    /// The next input, and the mutations that made it (for a failure message).
    public mutating func next() -> (input: [UInt8], mutations: [Mutation]) {
        var input = generator.element(of: corpus)
        var applied: [Mutation] = []
        for _ in 0..<generator.int(in: 1...4) {
            let mutation = generator.element(of: Mutation.allCases)
            apply(mutation, to: &input)
            applied.append(mutation)
        }
        if input.count > maximumSize { input.removeLast(input.count - maximumSize) }
        return (input, applied)
    }

    private mutating func apply(_ mutation: Mutation, to input: inout [UInt8]) {
        switch mutation {
        case .flipBit:
            guard !input.isEmpty else { return }
            input[position(in: input)] ^= UInt8(1) << UInt8(generator.int(in: 0..<8))
        case .setByte:
            guard !input.isEmpty else { return }
            let byte = generator.chance(0.5) ? generator.element(of: Self.interestingBytes) : UInt8.random(in: 0...255, using: &generator)
            input[position(in: input)] = byte
        case .insertBytes:
            let count = generator.int(in: 1...16)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            input.insert(contentsOf: bytes, at: generator.int(in: 0...input.count))
        case .deleteRange:
            guard !input.isEmpty else { return }
            let start = position(in: input)
            input.removeSubrange(start..<min(input.count, start + generator.int(in: 1...64)))
        case .truncate:
            input.removeLast(input.count - generator.int(in: 0...input.count))
        case .duplicateRange:
            guard !input.isEmpty else { return }
            let start = position(in: input)
            let piece = input[start..<min(input.count, start + generator.int(in: 1...256))]
            input.insert(contentsOf: piece, at: generator.int(in: 0...input.count))
        case .splice:
            let other = generator.element(of: corpus)
            input = Array(input.prefix(generator.int(in: 0...input.count)))
                + other.suffix(generator.int(in: 0...other.count))
        case .lengthField:
            writeLengthField(into: &input)
        case .token:
            let token = generator.element(of: tokens)
            let at = generator.int(in: 0...input.count)
            if generator.chance(0.5) || at + token.count > input.count {
                input.insert(contentsOf: token, at: at)
            } else {
                input.replaceSubrange(at..<at + token.count, with: token)
            }
        case .number:
            replaceNumber(in: &input)
        }
    }

    private mutating func position(in input: [UInt8]) -> Int {
        generator.int(in: 0..<input.count)
    }

    /// Overwrites 1, 2 or 4 bytes with a big-endian value a length field gets wrong: zero, one,
    /// the largest, near the input's own size, or the old value nudged by a little.
    private mutating func writeLengthField(into input: inout [UInt8]) {
        let width = generator.element(of: [1, 2, 4])
        guard input.count >= width else { return }
        let at = generator.int(in: 0...input.count - width)
        let old = input[at..<at + width].reduce(0) { $0 << 8 | Int($1) }
        let maximum = (1 << (8 * width)) - 1
        let candidates = [0, 1, maximum, maximum - 1, maximum / 2 + 1, input.count - at - width,
                          input.count - at - width + 1, old + generator.int(in: -4...4)]
        let value = generator.element(of: candidates) & maximum
        for index in 0..<width {
            input[at + index] = UInt8(truncatingIfNeeded: value >> (8 * (width - 1 - index)))
        }
    }

    /// Replaces a run of ASCII digits (a size, a rate, a value in a text file) with an edge
    /// case; inserts one when there is none.
    private mutating func replaceNumber(in input: inout [UInt8]) {
        let number = Array(generator.element(of: Self.interestingNumbers).utf8)
        let isDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        let starts = input.indices.filter { isDigit(input[$0]) && ($0 == 0 || !isDigit(input[$0 - 1])) }
        guard !starts.isEmpty else {
            input.insert(contentsOf: number, at: generator.int(in: 0...input.count))
            return
        }
        let start = generator.element(of: starts)
        var end = start
        while end < input.count && isDigit(input[end]) { end += 1 }
        input.replaceSubrange(start..<end, with: number)
    }
}
