import Foundation

/// Parses "2M", "500k", "1.5G", "8000000": a non-negative number with an optional decimal
/// suffix (k = 10³, M = 10⁶, G = 10⁹). Rates are bit/s, sizes bytes.
public func parseDecimalQuantity(_ text: String) -> Int64? {
    var t = text.trimmingCharacters(in: .whitespaces)
    guard !t.isEmpty else { return nil }
    var multiplier: Double = 1
    switch t.last! {
    case "k", "K": multiplier = 1e3
    case "M": multiplier = 1e6
    case "G": multiplier = 1e9
    default: break
    }
    if multiplier != 1 { t.removeLast() }
    guard let value = Double(t), value.isFinite, value >= 0 else { return nil }
    let result = (value * multiplier).rounded()
    guard result <= 1e15 else { return nil }
    return Int64(result)
}

/// Parses a duration: "10s", "1.5s", "500ms", "2m", "1h", "7d", "1m30s", or a bare number of seconds.
public func parseDuration(_ text: String) -> Double? {
    let t = text.trimmingCharacters(in: .whitespaces)
    guard !t.isEmpty else { return nil }
    if let plain = Double(t) { return plain.isFinite && plain >= 0 ? plain : nil }
    var total = 0.0
    var number = ""
    var index = t.startIndex
    var sawUnit = false
    while index < t.endIndex {
        let c = t[index]
        if c.isNumber || c == "." {
            number.append(c)
            index = t.index(after: index)
            continue
        }
        var unit = String(c)
        index = t.index(after: index)
        if c == "m", index < t.endIndex, t[index] == "s" {
            unit = "ms"
            index = t.index(after: index)
        }
        guard let value = Double(number) else { return nil }
        switch unit {
        case "d": total += value * 86_400
        case "h": total += value * 3600
        case "m": total += value * 60
        case "s": total += value
        case "ms": total += value / 1000
        default: return nil
        }
        number = ""
        sawUnit = true
    }
    guard number.isEmpty, sawUnit, total.isFinite else { return nil }
    return total
}

/// Formats a bit rate for people: 2000000 → "2M", 1500 → "1.5k".
public func formatDecimalQuantity(_ value: Int64) -> String {
    for (suffix, scale) in [("G", 1e9), ("M", 1e6), ("k", 1e3)] where Double(value) >= scale {
        let scaled = Double(value) / scale
        if scaled == scaled.rounded() { return "\(Int64(scaled))\(suffix)" }
        if (scaled * 1000).rounded() == scaled * 1000 {
            return String(format: "%g%@", scaled, suffix)
        }
    }
    return "\(value)"
}

/// A size for people: "812 kB", "4.2 MB", "1.25 GB".
public func formatByteSize(_ bytes: Int64) -> String {
    let value = Double(bytes)
    if value >= 1e9 { return String(format: "%.2f GB", value / 1e9) }
    if value >= 1e6 { return String(format: "%.1f MB", value / 1e6) }
    return String(format: "%.0f kB", value / 1e3)
}
