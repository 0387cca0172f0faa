/// Ordering names by how close they are to one that was typed, so that a message about an
/// unknown name can suggest the one that was meant.
public enum NearestNames {
    /// `known` ordered by edit distance from `typed`, ties kept in their own order.
    public static func ordered(_ typed: String, in known: [String]) -> [String] {
        known.enumerated()
            .map { (distance: editDistance(typed, $0.element), order: $0.offset, name: $0.element) }
            .sorted { ($0.distance, $0.order) < ($1.distance, $1.order) }
            .map(\.name)
    }

    /// The known name `typed` is most likely a misspelling of, if one is close enough to say
    /// so: a third of the name may be wrong, at least one character and at most as many as
    /// leave something of it (so "x" does not suggest "qp").
    public static func suggestion(for typed: String, in known: [String]) -> String? {
        guard let nearest = ordered(typed, in: known).first else { return nil }
        let distance = editDistance(typed, nearest)
        return distance <= max(1, typed.count / 3) && distance < typed.count ? nearest : nil
    }

    /// Levenshtein distance: insertions, deletions and substitutions of one character each.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
