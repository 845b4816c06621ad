# panther_core.data_model: one data model as the runner hands it to the event (the repository's
# `AnalysisType: datamodel` file, its `.py` already imported by the runner). As Panther's DataModel:
# `paths` maps a unified field name to its compiled Path, `methods` to the function a Method names;
# a Method the module does not define is an error here, when the model is built.
from .jsonpath import compile_path, find, find_paths

__all__ = ["DataModel", "E_NO_DATA_MODEL_FOUND"]

E_NO_DATA_MODEL_FOUND = "a data model hasn't been specified for log type"


class DataModel:
    def __init__(self, data_model_id, mappings, module=None):
        self.data_model_id = data_model_id
        self.paths = {}
        self.methods = {}
        for mapping in mappings:
            name = mapping.get("name")
            if mapping.get("path"):
                self.paths[name] = mapping["path"]
                compile_path(mapping["path"])  # a path this runtime cannot read fails here, named
            elif mapping.get("method"):
                fn = getattr(module, mapping["method"], None) if module is not None else None
                if not callable(fn):
                    raise AssertionError("DataModel is missing method named [%s]" % mapping["method"])
                self.methods[name] = fn
            else:
                raise AssertionError("DataModel [%s] is missing a field or method for [%s]" % (data_model_id, name))

    def matches(self, name, data):
        """Every value the Path of `name` matches in the raw event."""
        return find(self.paths[name], data)

    def match_paths(self, name, data):
        """(value, full path) of every match of the Path of `name` in the raw event."""
        return find_paths(self.paths[name], data)
