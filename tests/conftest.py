"""pytest fixtures shared by the test modules."""
import pytest
from instances import KERNELS


@pytest.fixture(params=sorted(KERNELS))
def kernel_name(request):
    return request.param
