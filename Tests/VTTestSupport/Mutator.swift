/// Makes malformed inputs from good ones: each call takes a corpus entry and applies one to four
/// mutations, chosen from those that break parsers in practice — flipped bits, bytes inserted
/// and removed, truncation, two inputs spliced together, length fields and numbers set to edge
/// values, and tokens (start codes, tags, keys) dropped in where they do not belong.
///
/// Everything it does follows from the generator (`SeededRandom`, whose draws do not depend
/// on the toolchain), so an input is named by the seed and the iteration that made it.
public struct Mutator {
    public enum Mutation: String, CaseIterable, Sendable {
        case flipBit, setByte, insertBytes, deleteRange, truncate, duplicateRange, splice
        case lengthField, token, number
    }

    public var generator: SeededRandom
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
        generator = SeededRandom(seed: seed)
        self.corpus = corpus
        self.tokens = tokens + Self.startCodeTokens
        self.maximumSize = maximumSize
    }

    /// The next input, and the mutations that made it (for a failure message).
    public mutating func next() -> (input: [UInt8], mutations: [Mutation]) {
        var input = pick(corpus)
        var applied: [Mutation] = []
        for _ in 0..<generator.next(in: 1...4) {
            let mutation = pick(Mutation.allCases)
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
            input[position(in: input)] ^= UInt8(1) << UInt8(generator.next(in: 0...7))
        case .setByte:
            guard !input.isEmpty else { return }
            let byte = generator.coin() ? pick(Self.interestingBytes) : randomByte()
            input[position(in: input)] = byte
        case .insertBytes:
            let count = generator.next(in: 1...16)
            var bytes: [UInt8] = []
            for _ in 0..<count { bytes.append(randomByte()) }
            input.insert(contentsOf: bytes, at: generator.next(in: 0...input.count))
        case .deleteRange:
            guard !input.isEmpty else { return }
            let start = position(in: input)
            input.removeSubrange(start..<min(input.count, start + generator.next(in: 1...64)))
        case .truncate:
            input.removeLast(input.count - generator.next(in: 0...input.count))
        case .duplicateRange:
            guard !input.isEmpty else { return }
            let start = position(in: input)
            let piece = input[start..<min(input.count, start + generator.next(in: 1...256))]
            input.insert(contentsOf: piece, at: generator.next(in: 0...input.count))
        case .splice:
            let other = pick(corpus)
            input = Array(input.prefix(generator.next(in: 0...input.count)))
                + other.suffix(generator.next(in: 0...other.count))
        case .lengthField:
            writeLengthField(into: &input)
        case .token:
            let token = pick(tokens)
            let at = generator.next(in: 0...input.count)
            if generator.coin() || at + token.count > input.count {
                input.insert(contentsOf: token, at: at)
            } else {
                input.replaceSubrange(at..<at + token.count, with: token)
            }
        case .number:
            replaceNumber(in: &input)
        }
    }

    /// An index of a non-empty input.
    private mutating func position(in input: [UInt8]) -> Int {
        generator.next(in: 0...input.count - 1)
    }

    private mutating func pick<T>(_ items: [T]) -> T {
        items[generator.next(in: 0...items.count - 1)]
    }

    private mutating func randomByte() -> UInt8 {
        UInt8(truncatingIfNeeded: generator.next())
    }

    /// Overwrites 1, 2 or 4 bytes with a big-endian value a length field gets wrong: zero, one,
    /// the largest, near the input's own size, or the old value nudged by a little.
    private mutating func writeLengthField(into input: inout [UInt8]) {
        let width = pick([1, 2, 4])
        guard input.count >= width else { return }
        let at = generator.next(in: 0...input.count - width)
        let old = input[at..<at + width].reduce(0) { $0 << 8 | Int($1) }
        let maximum = (1 << (8 * width)) - 1
        let candidates = [0, 1, maximum, maximum - 1, maximum / 2 + 1, input.count - at - width,
                          input.count - at - width + 1, old + generator.next(in: -4...4)]
        let value = pick(candidates) & maximum
        for index in 0..<width {
            input[at + index] = UInt8(truncatingIfNeeded: value >> (8 * (width - 1 - index)))
        }
    }

    /// Replaces a run of ASCII digits (a size, a rate, a value in a text file) with an edge
    /// case; inserts one when there is none.
    private mutating func replaceNumber(in input: inout [UInt8]) {
        let number = Array(pick(Self.interestingNumbers).utf8)
        let isDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        let starts = input.indices.filter { isDigit(input[$0]) && ($0 == 0 || !isDigit(input[$0 - 1])) }
        guard !starts.isEmpty else {
            input.insert(contentsOf: number, at: generator.next(in: 0...input.count))
            return
        }
        let start = pick(starts)
        var end = start
        while end < input.count && isDigit(input[end]) { end += 1 }
        input.replaceSubrange(start..<end, with: number)
    }
}
