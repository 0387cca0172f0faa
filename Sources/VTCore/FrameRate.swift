/// Frames per second as an exact fraction (30000/1001 for "29.97").
public struct FrameRate: Hashable, Sendable, CustomStringConvertible {
    public let numerator: Int
    public let denominator: Int

    public init?(numerator: Int, denominator: Int) {
        guard numerator > 0, denominator > 0, numerator <= 1_000_000, denominator <= 1_000_000 else {
            return nil
        }
        let g = FrameRate.gcd(numerator, denominator)
        self.numerator = numerator / g
        self.denominator = denominator / g
    }

    /// Accepts `30`, `30/1`, `30000/1001`, `30:1` and the NTSC decimals `23.976`, `29.97`,
    /// `59.94` (read as n×1000/1001, which is what cameras mean by them).
    public init?(parsing text: String) {
        let t = text.trimmingCharacters(in: .whitespaces)
        if let sep = t.firstIndex(where: { $0 == "/" || $0 == ":" }) {
            guard let n = Int(t[..<sep]), let d = Int(t[t.index(after: sep)...]) else { return nil }
            self.init(numerator: n, denominator: d)
            return
        }
        if let n = Int(t) {
            self.init(numerator: n, denominator: 1)
            return
        }
        guard let value = Double(t), value > 0, value.isFinite else { return nil }
        let ntsc = (value * 1001 / 1000).rounded()
        if abs(ntsc * 1000 / 1001 - value) < 0.0051 {
            self.init(numerator: Int(ntsc) * 1000, denominator: 1001)
        } else {
            self.init(numerator: Int((value * 1000).rounded()), denominator: 1000)
        }
    }

    /// A whole number of frames per second written in the code, known to be valid.
    private init(wholeFramesPerSecond rate: Int) {
        precondition(rate > 0 && rate <= 1_000_000)
        numerator = rate
        denominator = 1
    }

    /// 25 fps: what the Y4M specification's tools assume when a stream gives no rate.
    public static let fps25 = FrameRate(wholeFramesPerSecond: 25)
    /// 30 fps: what a camera is asked for, and a stream without a rate is taken to have,
    /// when nothing says otherwise.
    public static let fps30 = FrameRate(wholeFramesPerSecond: 30)

    public var framesPerSecond: Double { Double(numerator) / Double(denominator) }

    /// The duration of one frame.
    public var frameDuration: MediaTime {
        MediaTime(value: Int64(denominator), timescale: Int32(numerator))
    }

    /// The closest rate whose numerator and denominator are both at most `limit` (the best
    /// rational approximation, from the continued fraction): this rate when it already fits.
    /// For fields narrower than the fraction, such as VA-API's two 16-bit halves.
    public func approximated(limit: Int) -> FrameRate {
        guard numerator > limit || denominator > limit else { return self }
        // Convergents h/k of numerator/denominator, and the best semiconvergent at the end.
        var (h0, h1, k0, k1) = (0, 1, 1, 0)
        var (n, d) = (numerator, denominator)
        var best = FrameRate(numerator: max(1, min(limit, numerator / max(1, denominator))), denominator: 1)!
        while d != 0 {
            let a = n / d
            let h2 = a * h1 + h0
            let k2 = a * k1 + k0
            if h2 > limit || k2 > limit {
                // Largest t with t·h1 + h0 and t·k1 + k0 within the limit.
                let t = min(h1 > 0 ? (limit - h0) / h1 : a, k1 > 0 ? (limit - k0) / k1 : a)
                let candidates = [(h1, k1), (t * h1 + h0, t * k1 + k0)].filter { $0.0 > 0 && $0.1 > 0 }
                let target = framesPerSecond
                if let closest = candidates.min(by: { abs(Double($0.0) / Double($0.1) - target) < abs(Double($1.0) / Double($1.1) - target) }),
                   let rate = FrameRate(numerator: closest.0, denominator: closest.1) {
                    best = rate
                }
                return best
            }
            (h0, h1, k0, k1) = (h1, h2, k1, k2)
            (n, d) = (d, n - a * d)
        }
        return FrameRate(numerator: h1, denominator: k1) ?? best
    }

    public var description: String {
        denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)"
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}

import Foundation
