"""A list that keeps the other side of a node-tensor link in step (GraphSurgeon's SynchronizedList).

``node.inputs`` lists tensors and each of those tensors lists the node in its ``outputs``;
``node.outputs`` lists tensors and each lists the node in its ``inputs``. Editing either side
through these lists updates the other, so scripts never wire both ends by hand.
"""


class SynchronizedList(list):
    def __init__(self, owner, field_name, initial):
        super().__init__()
        self.owner = owner
        # The attribute of every element that lists the owner back.
        self.field_name = field_name
        self.extend(initial)

    def _link(self, elem):
        # list.append on the other side: going through its own SynchronizedList would recurse.
        list.append(getattr(elem, self.field_name), self.owner)

    def _unlink(self, elem):
        list.remove(getattr(elem, self.field_name), self.owner)

    def __delitem__(self, index):
        removed = self[index] if isinstance(index, slice) else [self[index]]
        for elem in removed:
            self._unlink(elem)
        super().__delitem__(index)

    def __setitem__(self, index, value):
        if isinstance(index, slice):
            value = list(value)
            for elem in self[index]:
                self._unlink(elem)
            super().__setitem__(index, value)
            for elem in value:
                self._link(elem)
            return
        self._unlink(self[index])
        super().__setitem__(index, value)
        self._link(value)

    def append(self, elem):
        super().append(elem)
        self._link(elem)

    def extend(self, elems):
        elems = list(elems)
        super().extend(elems)
        for elem in elems:
            self._link(elem)

    def insert(self, index, elem):
        super().insert(index, elem)
        self._link(elem)

    def remove(self, elem):
        super().remove(elem)
        self._unlink(elem)

    def pop(self, index=-1):
        elem = super().pop(index)
        self._unlink(elem)
        return elem

    def clear(self):
        for elem in self:
            self._unlink(elem)
        super().clear()

    def __iadd__(self, elems):
        self.extend(elems)
        return self

    def __add__(self, other):
        return list(self) + list(other)

    # Copies are plain lists: a copy must not link anything.
    def __copy__(self):
        return list(self)

    def __deepcopy__(self, memo):
        return list(self)


def assign_io(obj, name, value):
    """``obj.inputs = [...]`` replaces the contents (unlinking the old, linking the new) rather
    than the list object, so the links stay in step."""
    current = obj.__dict__.get(name)
    if current is None:
        object.__setattr__(obj, name, value)
    elif value is not current:
        value = list(value)
        current.clear()
        current.extend(value)
