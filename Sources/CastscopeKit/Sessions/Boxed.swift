/// A value held by reference, for a field that is large and mostly absent, so that the value
/// it is part of stays small (a held session, a live entry: thousands of each at once). Never
/// changed in place: a new value is a new box, so copies of the holder do not share changes.
final class Boxed<T: Sendable>: Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
